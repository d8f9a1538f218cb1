//! The console macros, over [`crate::platform::write_line`].

/// Prints one line on the console.
#[macro_export]
macro_rules! kprintln {
    () => { $crate::platform::write_line(format_args!("")) };
    ($($arg:tt)*) => { $crate::platform::write_line(format_args!($($arg)*)) };
}

/// Prints one machine-readable record: `@fw KIND fields...`
/// (docs/CONSOLE.md).
#[macro_export]
macro_rules! record {
    ($kind:literal) => { $crate::platform::write_line(format_args!(concat!("@fw ", $kind))) };
    ($kind:literal, $($arg:tt)*) => {
        $crate::platform::write_line(format_args!("@fw {} {}", $kind, format_args!($($arg)*)))
    };
}
