//! Decoding x86 CPU topology from raw CPUID register values (reference §7.1).
//!
//! The kernel executes CPUID on a CPU and hands the registers over unchanged;
//! this module interprets them the way Linux's x86 `parse_topology` does for
//! Intel-style enumeration (AMD's extended leaves are not decoded; on AMD the
//! kernel should pass leaf 0xB, which current AMD parts and QEMU provide).
//!
//! # Model
//!
//! An x2APIC ID is split into bit fields, one per topology level below the
//! package: `SMT`, `Core`, `Module`, `Tile`, `Die`, `DieGrp` ([`TopoLevel`]).
//! Each level has a *shift*: the number of low APIC-ID bits that identify a
//! CPU inside one unit of the next level up. The ID of a unit at level L+1 is
//! `apic_id >> shift(L)`. Setting a level's shift also sets every higher
//! level's (so a machine enumerating only SMT and Core gets
//! `shift(Module..DieGrp) = shift(Core)`), and `pkg_id = apic_id >> shift(DieGrp)`.
//!
//! # Sources, in Linux's order ([`ApicIdLayout::detect`])
//!
//! 1. Leaf 0x1F if the maximum basic leaf is ≥ 0x1F, else leaf 0xB if ≥ 0xB
//!    ([`ApicIdLayout::from_ext_leaf`]). Subleafs are read until
//!    `EBX[15:0] == 0` or `ECX[15:8] == 0`. Per subleaf: `EAX[4:0]` = shift,
//!    `EBX[15:0]` = logical CPUs in this level's unit, `ECX[15:8]` = level
//!    type (1 SMT, 2 Core, and for 0x1F also 3 Module, 4 Tile, 5 Die,
//!    6 DieGrp). A type this code does not know becomes the level after the
//!    previous one (capped at `DieGrp`). A subleaf 0 with shift 0 but a count
//!    above 1 is repaired to `ceil_log2(count)`. A leaf whose subleaf 0 is
//!    already invalid is skipped in favour of the next source.
//! 2. Legacy ([`ApicIdLayout::from_legacy`]): `cores = leaf4[0].EAX[31:26] + 1`
//!    (1 without leaf 4), `core_shift = ceil_log2(cores)`; with HTT
//!    (leaf 1 EDX bit 28) `smt_shift = ceil_log2(leaf1.EBX[23:16]) - core_shift`
//!    (saturating) and `core_shift += smt_shift`.
//!
//! The last-level cache comes from leaf 4 ([`ApicIdLayout::with_llc_from_leaf4`]):
//! the first level-3 entry, or without one the first level-2 entry; its
//! `EAX[25:14] + 1` is the number of APIC IDs sharing it, so
//! `llc_shift = ceil_log2(EAX[25:14] + 1)`. Without such an entry the LLC is
//! taken to be the package (`llc_shift = shift(DieGrp)`).

use super::{ceil_log2, CpuTopology, TopologyError};

/// The four registers of one CPUID (sub)leaf, as the CPU returned them.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CpuidRegs {
    pub eax: u32,
    pub ebx: u32,
    pub ecx: u32,
    pub edx: u32,
}

impl CpuidRegs {
    pub const fn new(eax: u32, ebx: u32, ecx: u32, edx: u32) -> Self {
        CpuidRegs { eax, ebx, ecx, edx }
    }
}

/// Which extended-topology leaf a list of subleafs came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExtLeaf {
    /// Leaf 0xB: only level types 1 (SMT) and 2 (Core) are defined.
    Leaf0B,
    /// Leaf 0x1F: types 1..=6 are defined.
    Leaf1F,
}

impl ExtLeaf {
    fn number(self) -> u32 {
        match self {
            ExtLeaf::Leaf0B => 0xB,
            ExtLeaf::Leaf1F => 0x1F,
        }
    }
}

/// Topology levels below the package, bottom-up (Linux's `TOPO_*_DOMAIN`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TopoLevel {
    Smt = 0,
    Core = 1,
    Module = 2,
    Tile = 3,
    Die = 4,
    DieGrp = 5,
}

const NLEVELS: usize = 6;

/// Where an [`ApicIdLayout`] came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LayoutSource {
    Leaf1F,
    Leaf0B,
    Legacy,
    /// Built directly with [`ApicIdLayout::from_shifts`].
    Explicit,
}

/// Everything [`ApicIdLayout::detect`] needs, as read on one CPU (normally
/// the boot CPU; all CPUs of a machine share the layout).
#[derive(Clone, Copy, Debug)]
pub struct CpuidTopologyInput<'a> {
    /// CPUID leaf 0 EAX: the highest basic leaf.
    pub max_basic_leaf: u32,
    /// Leaf 1.
    pub leaf1: CpuidRegs,
    /// Leaf 4 subleafs 0, 1, ... (only EAX is used; may stop at the first
    /// entry whose type `EAX[4:0]` is 0). Empty when leaf 4 is unavailable.
    pub leaf4: &'a [CpuidRegs],
    /// Leaf 0xB subleafs 0, 1, ... (empty when unavailable).
    pub leaf_0b: &'a [CpuidRegs],
    /// Leaf 0x1F subleafs 0, 1, ... (empty when unavailable).
    pub leaf_1f: &'a [CpuidRegs],
}

/// How APIC-ID bits map to topology levels, plus the LLC sharing shift.
///
/// Invariant: `shifts` is non-decreasing from `Smt` to `DieGrp` (the
/// extended-leaf parser rejects decreasing shifts; the legacy path builds
/// them in order), and every shift is at most 32.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ApicIdLayout {
    shifts: [u8; NLEVELS],
    llc_shift: Option<u8>,
    source: LayoutSource,
}

fn shr(v: u32, s: u8) -> u32 {
    v.checked_shr(s as u32).unwrap_or(0)
}

fn low_mask(s: u8) -> u32 {
    if s >= 32 {
        u32::MAX
    } else {
        (1u32 << s) - 1
    }
}

impl ApicIdLayout {
    /// A layout from explicit shifts: `smt_shift` for the SMT level and
    /// `pkg_shift` for every level from Core up; `llc_shift` `None` means
    /// LLC = package. Shifts are clamped to 32 and `pkg_shift` to at least
    /// `smt_shift`.
    pub fn from_shifts(smt_shift: u8, pkg_shift: u8, llc_shift: Option<u8>) -> Self {
        let smt = smt_shift.min(32);
        let pkg = pkg_shift.min(32).max(smt);
        let mut shifts = [pkg; NLEVELS];
        shifts[TopoLevel::Smt as usize] = smt;
        ApicIdLayout {
            shifts,
            llc_shift: llc_shift.map(|s| s.min(32)),
            source: LayoutSource::Explicit,
        }
    }

    /// Parses the subleafs of leaf 0x1F or 0xB (see the module docs).
    pub fn from_ext_leaf(leaf: ExtLeaf, subleaves: &[CpuidRegs]) -> Result<Self, TopologyError> {
        let mut shifts = [0u8; NLEVELS];
        let mut last: Option<usize> = None;
        let mut last_shift = 0u8;
        for (i, r) in subleaves.iter().enumerate() {
            let count = r.ebx & 0xffff;
            let ty = ((r.ecx >> 8) & 0xff) as u8;
            if count == 0 || ty == 0 {
                break;
            }
            let mut shift = (r.eax & 0x1f) as u8;
            if i == 0 && shift == 0 && count > 1 {
                shift = ceil_log2(count);
            }
            let known = match (leaf, ty) {
                (_, 1) => Some(TopoLevel::Smt as usize),
                (_, 2) => Some(TopoLevel::Core as usize),
                (ExtLeaf::Leaf1F, 3..=6) => Some(ty as usize - 1),
                _ => None,
            };
            let level = match known {
                Some(l) => {
                    if last.is_some_and(|p| l <= p) {
                        return Err(TopologyError::CpuidLevelOrder {
                            leaf: leaf.number(),
                            subleaf: i,
                            level_type: ty,
                        });
                    }
                    l
                }
                None => last.map_or(0, |p| (p + 1).min(NLEVELS - 1)),
            };
            if shift < last_shift {
                return Err(TopologyError::CpuidShiftDecreases {
                    leaf: leaf.number(),
                    subleaf: i,
                    shift,
                    previous: last_shift,
                });
            }
            for s in shifts.iter_mut().skip(level) {
                *s = shift;
            }
            last = Some(level);
            last_shift = shift;
        }
        if last.is_none() {
            return Err(TopologyError::CpuidNoLevels {
                leaf: leaf.number(),
            });
        }
        let source = match leaf {
            ExtLeaf::Leaf0B => LayoutSource::Leaf0B,
            ExtLeaf::Leaf1F => LayoutSource::Leaf1F,
        };
        Ok(ApicIdLayout {
            shifts,
            llc_shift: None,
            source,
        })
    }

    /// The legacy computation from leaf 1 (`EBX`, `EDX`) and leaf 4 subleaf 0
    /// `EAX` (`None`, or a null cache type, when leaf 4 is unavailable).
    pub fn from_legacy(leaf1_ebx: u32, leaf1_edx: u32, leaf4_eax0: Option<u32>) -> Self {
        let cores = match leaf4_eax0 {
            Some(eax) if eax & 0x1f != 0 => (eax >> 26) + 1,
            _ => 1,
        };
        let mut core_shift = ceil_log2(cores);
        let mut smt_shift = 0;
        if leaf1_edx & (1 << 28) != 0 {
            let nproc = (leaf1_ebx >> 16) & 0xff;
            smt_shift = ceil_log2(nproc).saturating_sub(core_shift);
            core_shift += smt_shift;
        }
        let mut shifts = [core_shift; NLEVELS];
        shifts[TopoLevel::Smt as usize] = smt_shift;
        ApicIdLayout {
            shifts,
            llc_shift: None,
            source: LayoutSource::Legacy,
        }
    }

    /// Sets the LLC shift from leaf 4 subleafs (their `EAX` values; see the
    /// module docs). Leaves the LLC = package default when no L3/L2 entry is
    /// found.
    pub fn with_llc_from_leaf4(mut self, leaf4: &[CpuidRegs]) -> Self {
        let mut l2 = None;
        let mut l3 = None;
        for r in leaf4 {
            if r.eax & 0x1f == 0 {
                break;
            }
            let level = (r.eax >> 5) & 0x7;
            let sharing = ((r.eax >> 14) & 0xfff) + 1;
            let shift = ceil_log2(sharing);
            match level {
                2 if l2.is_none() => l2 = Some(shift),
                3 if l3.is_none() => l3 = Some(shift),
                _ => {}
            }
        }
        if let Some(s) = l3.or(l2) {
            self.llc_shift = Some(s);
        }
        self
    }

    /// Picks the source the way Linux does (0x1F, then 0xB, then legacy) and
    /// adds the LLC from leaf 4. Never fails: a malformed extended leaf falls
    /// through to the next source.
    pub fn detect(input: &CpuidTopologyInput<'_>) -> Self {
        let mut layout = None;
        if input.max_basic_leaf >= 0x1F {
            layout = Self::from_ext_leaf(ExtLeaf::Leaf1F, input.leaf_1f).ok();
        }
        if layout.is_none() && input.max_basic_leaf >= 0xB {
            layout = Self::from_ext_leaf(ExtLeaf::Leaf0B, input.leaf_0b).ok();
        }
        let layout = layout.unwrap_or_else(|| {
            let leaf4_eax0 = if input.max_basic_leaf >= 4 {
                input.leaf4.first().map(|r| r.eax)
            } else {
                None
            };
            Self::from_legacy(input.leaf1.ebx, input.leaf1.edx, leaf4_eax0)
        });
        if input.max_basic_leaf >= 4 {
            layout.with_llc_from_leaf4(input.leaf4)
        } else {
            layout
        }
    }

    /// The shift of one level (`apic_id >> shift(l)` identifies the unit of the
    /// level above `l`).
    pub fn shift(&self, level: TopoLevel) -> u8 {
        self.shifts[level as usize]
    }

    /// Bits of the thread-in-core field.
    pub fn smt_shift(&self) -> u8 {
        self.shift(TopoLevel::Smt)
    }

    /// Shift of the core level (equals [`Self::pkg_shift`] without
    /// module/tile/die levels).
    pub fn core_shift(&self) -> u8 {
        self.shift(TopoLevel::Core)
    }

    /// `pkg_id = apic_id >> pkg_shift`.
    pub fn pkg_shift(&self) -> u8 {
        self.shift(TopoLevel::DieGrp)
    }

    /// `llc_id = apic_id >> llc_shift` (the package shift when leaf 4 gave
    /// nothing).
    pub fn llc_shift(&self) -> u8 {
        self.llc_shift.unwrap_or(self.pkg_shift())
    }

    /// Where this layout came from.
    pub fn source(&self) -> LayoutSource {
        self.source
    }

    /// Splits one CPU's APIC ID into Linux's topology IDs.
    pub fn decode(&self, cpu: usize, apic_id: u32, node: u32) -> CpuTopology {
        let smt = self.smt_shift();
        let pkg = self.pkg_shift();
        CpuTopology {
            cpu,
            apic_id,
            smt_id: apic_id & low_mask(smt),
            core_id: shr(apic_id & low_mask(pkg), smt),
            pkg_id: shr(apic_id, pkg),
            llc_id: shr(apic_id, self.llc_shift()),
            node,
        }
    }
}

/// The CPU's maker, from CPUID leaf 0's vendor string (EBX, EDX, ECX).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuVendor {
    Intel,
    Amd,
    Hygon,
    /// Any other vendor string (Linux's quirks treat these as old CPUs).
    Other,
}

/// A CPU's vendor, family and model, decoded from CPUID leaves 0 and 1 as
/// Linux's `x86_family()`/`x86_model()` (arch/x86/lib/cpu.c) do: the extended
/// family is added only when the base family is 0xF; the extended model is
/// prepended for every family from 6 on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CpuSignature {
    pub vendor: CpuVendor,
    pub family: u32,
    pub model: u32,
}

impl CpuSignature {
    /// Decodes leaf 0's registers (vendor) and leaf 1's EAX (signature).
    pub fn from_leaves(leaf0: CpuidRegs, leaf1_eax: u32) -> Self {
        let mut vendor = [0u8; 12];
        vendor[0..4].copy_from_slice(&leaf0.ebx.to_le_bytes());
        vendor[4..8].copy_from_slice(&leaf0.edx.to_le_bytes());
        vendor[8..12].copy_from_slice(&leaf0.ecx.to_le_bytes());
        let vendor = match &vendor {
            b"GenuineIntel" => CpuVendor::Intel,
            b"AuthenticAMD" => CpuVendor::Amd,
            b"HygonGenuine" => CpuVendor::Hygon,
            _ => CpuVendor::Other,
        };
        let base_family = (leaf1_eax >> 8) & 0xf;
        let family = if base_family == 0xf { base_family + ((leaf1_eax >> 20) & 0xff) } else { base_family };
        let mut model = (leaf1_eax >> 4) & 0xf;
        if family >= 0x6 {
            model |= ((leaf1_eax >> 16) & 0xf) << 4;
        }
        CpuSignature { vendor, family, model }
    }

    /// The INIT-to-STARTUP delay in microseconds, as `smpboot.c:
    /// smp_quirk_init_udelay()` chooses it with the v6.15 fix that compares
    /// Intel's family and model together (every Intel CPU from the Pentium
    /// Pro, family 6 model 1, on): none on a modern CPU, the MultiProcessor
    /// Specification's 10 ms on anything else. Linux's `cpu_init_udelay=`
    /// override is not offered.
    pub fn init_udelay_us(&self) -> u64 {
        let modern = match self.vendor {
            CpuVendor::Intel => (self.family, self.model) >= (6, 1),
            CpuVendor::Hygon => self.family >= 0x18,
            CpuVendor::Amd => self.family >= 0xf,
            CpuVendor::Other => false,
        };
        if modern {
            0
        } else {
            INIT_UDELAY_LEGACY_US
        }
    }
}

/// The MultiProcessor Specification's INIT-to-STARTUP wait, for CPUs Linux
/// does not exempt (`UDELAY_10MS_LEGACY`).
pub const INIT_UDELAY_LEGACY_US: u64 = 10_000;

#[cfg(test)]
mod tests {
    use super::*;

    fn leaf0(vendor: &[u8; 12]) -> CpuidRegs {
        let w = |i: usize| u32::from_le_bytes([vendor[i], vendor[i + 1], vendor[i + 2], vendor[i + 3]]);
        CpuidRegs::new(0xd, w(0), w(8), w(4))
    }

    /// Leaf 1 EAX from its fields: extended family, extended model, base family, model, stepping.
    fn sig(ext_family: u32, ext_model: u32, family: u32, model: u32) -> u32 {
        (ext_family << 20) | (ext_model << 16) | (family << 8) | (model << 4) | 1
    }

    #[test]
    fn signature_decodes_family_and_model_as_linux() {
        // A Skylake client: family 6, extended model 5, model 0xE.
        let s = CpuSignature::from_leaves(leaf0(b"GenuineIntel"), sig(0, 5, 6, 0xe));
        assert_eq!(s, CpuSignature { vendor: CpuVendor::Intel, family: 6, model: 0x5e });
        // Zen 3: base family 0xF plus extended family 0xA, extended model 2, model 1.
        let s = CpuSignature::from_leaves(leaf0(b"AuthenticAMD"), sig(0xa, 2, 0xf, 1));
        assert_eq!(s, CpuSignature { vendor: CpuVendor::Amd, family: 0x19, model: 0x21 });
        // Below family 6 the extended model bits are not part of the model.
        let s = CpuSignature::from_leaves(leaf0(b"GenuineIntel"), sig(0, 3, 5, 2));
        assert_eq!((s.family, s.model), (5, 2));
        // The extended family counts only on top of base family 0xF.
        let s = CpuSignature::from_leaves(leaf0(b"GenuineIntel"), sig(3, 0, 6, 1));
        assert_eq!(s.family, 6);
        assert_eq!(CpuSignature::from_leaves(leaf0(b"CyrixInstead"), sig(0, 0, 6, 0)).vendor, CpuVendor::Other);
    }

    /// smpboot.c: smp_quirk_init_udelay() with the v6.15 family-and-model fix.
    #[test]
    fn init_udelay_follows_linux_cut_offs() {
        let d = |v: &[u8; 12], s: u32| CpuSignature::from_leaves(leaf0(v), s).init_udelay_us();
        // Intel: the Pentium Pro (6, 1) is the first exempt model; (6, 0) and a Pentium wait.
        assert_eq!(d(b"GenuineIntel", sig(0, 0, 6, 1)), 0);
        assert_eq!(d(b"GenuineIntel", sig(0, 0, 6, 0)), INIT_UDELAY_LEGACY_US);
        assert_eq!(d(b"GenuineIntel", sig(0, 0, 5, 2)), INIT_UDELAY_LEGACY_US);
        // Intel family 0xF (Pentium 4) and later families are exempt too (the v6.15 fix).
        assert_eq!(d(b"GenuineIntel", sig(0, 0, 0xf, 2)), 0);
        assert_eq!(d(b"GenuineIntel", sig(0, 0, 0xf, 0)), 0);
        // AMD from family 0xF (K8) on; a K7 (family 6) waits.
        assert_eq!(d(b"AuthenticAMD", sig(0, 0, 0xf, 5)), 0);
        assert_eq!(d(b"AuthenticAMD", sig(0, 0, 6, 8)), INIT_UDELAY_LEGACY_US);
        // Hygon from family 0x18; an older family number waits.
        assert_eq!(d(b"HygonGenuine", sig(9, 0, 0xf, 0)), 0);
        assert_eq!(d(b"HygonGenuine", sig(8, 0, 0xf, 0)), INIT_UDELAY_LEGACY_US);
        // Anyone else gets the specification's delay.
        assert_eq!(d(b"CentaurHauls", sig(0, 0, 6, 0xf)), INIT_UDELAY_LEGACY_US);
    }

    fn sub(shift: u32, count: u32, ty: u32, idx: u32) -> CpuidRegs {
        CpuidRegs::new(shift, count, (ty << 8) | idx, 0)
    }

    #[test]
    fn topology_ext_leaf_basic() {
        let l = ApicIdLayout::from_ext_leaf(
            ExtLeaf::Leaf0B,
            &[sub(1, 2, 1, 0), sub(3, 6, 2, 1), sub(0, 0, 0, 2)],
        )
        .unwrap();
        assert_eq!((l.smt_shift(), l.core_shift(), l.pkg_shift()), (1, 3, 3));
        assert_eq!(l.shift(TopoLevel::Die), 3);
        let t = l.decode(0, 0b1101, 0);
        assert_eq!((t.smt_id, t.core_id, t.pkg_id, t.llc_id), (1, 2, 1, 1));
    }

    #[test]
    fn topology_ext_leaf_fixup_unknown_and_errors() {
        // Subleaf 0 with shift 0 but 4 CPUs gets shift 2.
        let l = ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &[sub(0, 4, 1, 0), sub(3, 8, 2, 1)])
            .unwrap();
        assert_eq!(l.smt_shift(), 2);
        // Type 5 (Die) is unknown for leaf 0xB: becomes the level after Core.
        let l = ApicIdLayout::from_ext_leaf(
            ExtLeaf::Leaf0B,
            &[sub(1, 2, 1, 0), sub(2, 4, 2, 1), sub(4, 16, 5, 2)],
        )
        .unwrap();
        assert_eq!(l.core_shift(), 2);
        assert_eq!(l.shift(TopoLevel::Module), 4);
        assert_eq!(l.pkg_shift(), 4);
        // For 0x1F it is a Die, leaving Module/Tile at the core shift.
        let l = ApicIdLayout::from_ext_leaf(
            ExtLeaf::Leaf1F,
            &[sub(1, 2, 1, 0), sub(2, 4, 2, 1), sub(4, 16, 5, 2)],
        )
        .unwrap();
        assert_eq!(l.shift(TopoLevel::Tile), 2);
        assert_eq!(l.shift(TopoLevel::Die), 4);
        assert_eq!(
            ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &[sub(1, 0, 1, 0)]),
            Err(TopologyError::CpuidNoLevels { leaf: 0xB })
        );
        assert!(matches!(
            ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &[sub(2, 4, 2, 0), sub(1, 2, 1, 1)]),
            Err(TopologyError::CpuidLevelOrder { .. })
        ));
        assert!(matches!(
            ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf1F, &[sub(3, 8, 1, 0), sub(1, 2, 2, 1)]),
            Err(TopologyError::CpuidShiftDecreases { .. })
        ));
    }

    #[test]
    fn topology_legacy_and_llc() {
        // 4 cores (leaf 4 EAX[31:26] = 3), 8 logical per package, HTT set.
        let l = ApicIdLayout::from_legacy(8 << 16, 1 << 28, Some((3 << 26) | 1));
        assert_eq!((l.smt_shift(), l.core_shift(), l.pkg_shift()), (1, 3, 3));
        // No HTT: no SMT bits.
        let l = ApicIdLayout::from_legacy(8 << 16, 0, Some((3 << 26) | 1));
        assert_eq!((l.smt_shift(), l.pkg_shift()), (0, 2));
        // No leaf 4, HTT with 2 logical: 1 core, SMT shift 1.
        let l = ApicIdLayout::from_legacy(2 << 16, 1 << 28, None);
        assert_eq!((l.smt_shift(), l.pkg_shift()), (1, 1));
        // LLC: L3 shared by 4 IDs wins over L2 shared by 2.
        let l2 = CpuidRegs::new((1 << 14) | (2 << 5) | 3, 0, 0, 0);
        let l3 = CpuidRegs::new((3 << 14) | (3 << 5) | 3, 0, 0, 0);
        let l = ApicIdLayout::from_shifts(1, 3, None);
        assert_eq!(l.llc_shift(), 3);
        assert_eq!(l.with_llc_from_leaf4(&[l2, l3]).llc_shift(), 2);
        assert_eq!(l.with_llc_from_leaf4(&[l2]).llc_shift(), 1);
        assert_eq!(
            l.with_llc_from_leaf4(&[CpuidRegs::default(), l3])
                .llc_shift(),
            3
        );
    }

    #[test]
    fn topology_huge_shifts_do_not_panic() {
        let l = ApicIdLayout::from_ext_leaf(ExtLeaf::Leaf0B, &[sub(31, 2, 1, 0), sub(31, 2, 2, 1)])
            .unwrap();
        let t = l.decode(0, u32::MAX, 0);
        assert_eq!(t.pkg_id, 1);
        let l = ApicIdLayout::from_shifts(40, 40, Some(40));
        let t = l.decode(0, u32::MAX, 0);
        assert_eq!(
            (t.smt_id, t.core_id, t.pkg_id, t.llc_id),
            (u32::MAX, 0, 0, 0)
        );
    }
}
