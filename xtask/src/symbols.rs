//! Symbolizes backtrace and fault addresses with the kernel ELF's symbol table.

use std::path::Path;

use object::{Object, ObjectSection, ObjectSymbol, SectionKind, SymbolKind};

#[derive(Debug, Clone, PartialEq, Eq)]
struct Sym {
    addr: u64,
    size: u64,
    name: String,
}

/// Function symbols sorted by address, demangled.
#[derive(Debug, Default, Clone)]
pub struct Symbols {
    syms: Vec<Sym>,
}

impl Symbols {
    pub fn load(path: &Path) -> Result<Symbols, String> {
        let data = std::fs::read(path).map_err(|e| format!("{}: {e}", path.display()))?;
        let file = object::File::parse(&*data).map_err(|e| format!("{}: {e}", path.display()))?;
        let list = file
            .symbols()
            .filter(|s| s.address() != 0 && !s.is_undefined())
            // Functions, and assembly labels (untyped symbols in code sections, e.g. boot stubs).
            .filter(|s| match s.kind() {
                SymbolKind::Text => true,
                SymbolKind::Unknown | SymbolKind::Label => s
                    .section_index()
                    .and_then(|i| file.section_by_index(i).ok())
                    .is_some_and(|sec| sec.kind() == SectionKind::Text),
                _ => false,
            })
            .filter_map(|s| Some((s.address(), s.size(), s.name().ok()?.to_string())));
        Ok(Symbols::from_list(list))
    }

    /// From (address, size, raw name) triples.
    pub fn from_list(list: impl IntoIterator<Item = (u64, u64, String)>) -> Symbols {
        let mut syms: Vec<Sym> = list
            .into_iter()
            .map(|(addr, size, name)| Sym {
                addr,
                size,
                name: format!("{:#}", rustc_demangle::demangle(&name)),
            })
            .collect();
        syms.sort_by(|a, b| a.addr.cmp(&b.addr).then(b.size.cmp(&a.size)));
        syms.dedup_by_key(|s| s.addr);
        Symbols { syms }
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Demangled names, in address order.
    pub fn names(&self) -> impl Iterator<Item = &str> + Clone {
        self.syms.iter().map(|s| s.name.as_str())
    }

    /// The address of the (first) symbol with this demangled name.
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.syms.iter().find(|s| s.name == name).map(|s| s.addr)
    }

    /// The symbol containing `addr`, and the offset into it.
    pub fn lookup(&self, addr: u64) -> Option<(&str, u64)> {
        let i = self
            .syms
            .partition_point(|s| s.addr <= addr)
            .checked_sub(1)?;
        let s = &self.syms[i];
        if s.size != 0 && addr >= s.addr + s.size {
            return None;
        }
        Some((&s.name, addr - s.addr))
    }

    /// `name+0xoff` for an address. Return addresses (backtrace frames) point after the call,
    /// possibly past the end of a `noreturn` caller, so they are looked up one byte earlier.
    pub fn describe(&self, addr: u64, return_address: bool) -> Option<String> {
        let probe = if return_address && self.lookup(addr).is_none_or(|(_, off)| off == 0) {
            addr.checked_sub(1)?
        } else {
            addr
        };
        let (name, off) = self.lookup(probe)?;
        Some(format!("{name}+{:#x}", addr - (probe - off)))
    }

    /// Adds ` <symbol+0xoff>` after the `addr=` of `@fw bt` lines and the `rip=` of `@fw fault`
    /// lines; other lines are returned unchanged.
    pub fn annotate(&self, line: &str) -> String {
        let key = if line.starts_with("@fw bt ") {
            "addr="
        } else if line.starts_with("@fw fault ") {
            "rip="
        } else {
            return line.to_string();
        };
        let Some(pos) = line.find(&format!(" {key}")) else {
            return line.to_string();
        };
        let vstart = pos + 1 + key.len();
        let vend = line[vstart..]
            .find(' ')
            .map(|i| vstart + i)
            .unwrap_or(line.len());
        let Some(addr) = fairway_scenarios::log::parse_num(&line[vstart..vend]) else {
            return line.to_string();
        };
        match self.describe(addr, key == "addr=") {
            Some(s) => format!("{} <{s}>{}", &line[..vend], &line[vend..]),
            None => line.to_string(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syms() -> Symbols {
        Symbols::from_list([
            (
                0x1000,
                0x100,
                "_ZN14fairway_kernel4main17h0123456789abcdefE".to_string(),
            ),
            (0x1100, 0x80, "rust_begin_unwind".to_string()),
            (0x2000, 0, "_start".to_string()),
        ])
    }

    #[test]
    fn lookup_and_demangle() {
        let s = syms();
        assert_eq!(s.lookup(0x1010), Some(("fairway_kernel::main", 0x10)));
        assert_eq!(s.lookup(0x1180), None);
        assert_eq!(s.lookup(0x0fff), None);
        assert_eq!(s.lookup(0x2004), Some(("_start", 4)));
        assert_eq!(s.address_of("rust_begin_unwind"), Some(0x1100));
        assert_eq!(s.address_of("fairway_kernel::main::h0123456789abcdef"), None);
        assert_eq!(s.names().collect::<Vec<_>>(), ["fairway_kernel::main", "rust_begin_unwind", "_start"]);
        assert_eq!(
            s.describe(0x1100, true).unwrap(),
            "fairway_kernel::main+0x100"
        );
        assert_eq!(s.describe(0x1100, false).unwrap(), "rust_begin_unwind+0x0");
    }

    #[test]
    fn annotates_bt_and_fault_lines() {
        let s = syms();
        assert_eq!(
            s.annotate("@fw bt cpu=0 frame=1 addr=0x1010"),
            "@fw bt cpu=0 frame=1 addr=0x1010 <fairway_kernel::main+0x10>"
        );
        assert_eq!(
            s.annotate("@fw fault cpu=1 vector=14 name=#PF error=0x2 rip=0x1104 cr2=0xdead0000"),
            "@fw fault cpu=1 vector=14 name=#PF error=0x2 rip=0x1104 <rust_begin_unwind+0x4> cr2=0xdead0000"
        );
        assert_eq!(
            s.annotate("@fw bt cpu=0 frame=1 addr=0x9"),
            "@fw bt cpu=0 frame=1 addr=0x9"
        );
        assert_eq!(s.annotate("@fw stage name=entry"), "@fw stage name=entry");
        assert_eq!(s.annotate("@fw bt cpu=0 addr=zz"), "@fw bt cpu=0 addr=zz");
    }

    #[test]
    fn loads_a_real_elf() {
        let s = Symbols::load(&std::env::current_exe().unwrap()).unwrap();
        assert!(!s.is_empty());
        assert!(s
            .syms
            .iter()
            .any(|x| x.name.contains("symbols::tests::loads_a_real_elf")));
        assert!(Symbols::load(Path::new("/nonexistent")).is_err());
        assert!(Symbols::load(Path::new("/etc/os-release")).is_err());
    }
}
