//! Link the kernel as a static, freestanding ELF laid out by boot/linker.ld.
fn main() {
    let dir = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let boot = std::path::Path::new(&dir).join("../boot");
    let script = boot.join("linker.ld");
    println!("cargo:rustc-link-arg-bins=-nostartfiles");
    println!("cargo:rustc-link-arg-bins=-nostdlib");
    println!("cargo:rustc-link-arg-bins=-static");
    println!("cargo:rustc-link-arg-bins=-no-pie");
    println!("cargo:rustc-link-arg-bins=-Wl,--build-id=none");
    println!("cargo:rustc-link-arg-bins=-Wl,-z,max-page-size=0x1000");
    println!("cargo:rustc-link-arg-bins=-T{}", script.display());
    for f in ["linker.ld", "multiboot.S", "trampoline.S", "isr.S"] {
        println!("cargo:rerun-if-changed={}", boot.join(f).display());
    }
}
