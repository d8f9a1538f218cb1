//! CPUID access.

/// The four registers one CPUID query returns.
#[derive(Clone, Copy, Debug, Default)]
pub struct Regs {
    pub eax: u32,
    pub ebx: u32,
    pub ecx: u32,
    pub edx: u32,
}

/// Executes CPUID for `leaf`/`subleaf`.
pub fn cpuid(leaf: u32, subleaf: u32) -> Regs {
    #[allow(unused_unsafe)]
    // SAFETY: CPUID is available on every x86_64 CPU and has no side effects.
    let r = unsafe { core::arch::x86_64::__cpuid_count(leaf, subleaf) };
    Regs { eax: r.eax, ebx: r.ebx, ecx: r.ecx, edx: r.edx }
}

/// Highest standard leaf.
pub fn max_leaf() -> u32 {
    cpuid(0, 0).eax
}
/// Whether the CPU offers x2APIC mode (CPUID.1:ECX bit 21).
pub fn has_x2apic() -> bool {
    cpuid(1, 0).ecx & (1 << 21) != 0
}

/// This CPU's APIC id: the x2APIC id from leaf 0xB when present, else the
/// 8-bit initial APIC id from leaf 1.
pub fn apic_id() -> u32 {
    if max_leaf() >= 0xB && cpuid(0xB, 0).ebx & 0xffff != 0 {
        cpuid(0xB, 0).edx
    } else {
        cpuid(1, 0).ebx >> 24
    }
}
