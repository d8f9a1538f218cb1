//! Boots at each -smp and machine shape: topology, APIC modes, no ACPI.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        Scenario {
            name: "smp-1",
            smp: "1",
            check: check_boot::<1>,
            ..BASE
        },
        Scenario {
            name: "smp-2",
            smp: "2",
            check: check_boot::<2>,
            ..BASE
        },
        Scenario {
            name: "smp-4",
            smp: "4",
            check: check_boot::<4>,
            ..BASE
        },
        Scenario {
            name: "smp-8",
            smp: "8",
            check: check_boot::<8>,
            ..BASE
        },
        Scenario {
            name: "smp-16",
            smp: "16",
            slots: 2,
            check: check_boot::<16>,
            ..BASE
        },
        Scenario {
            name: "smp-32",
            smp: "32",
            append: TCG_CROWD_WATCHDOGS,
            slots: 2,
            timeout_s: 120,
            check: check_boot::<32>,
            ..BASE
        },
        Scenario {
            name: "smp-64",
            smp: "64",
            append: TCG_CROWD_WATCHDOGS,
            memory_mib: 1024,
            slots: 2,
            timeout_s: 120,
            check: check_smp64,
            ..BASE
        },
        Scenario {
            // Past the 255 CPUs of QEMU's pc machine: the harness boots q35 (xtask's
            // qemu::PC_MAX_CPUS), and socket 1's APIC IDs start at 256 (x2APIC only). hz=100:
            // at 1000 Hz the ticks of 255 vCPUs kept QEMU's main loop so busy on 2 host cores
            // that the timer self-check never ended (docs/RUNNING.md, "Many CPUs").
            name: "smp-288-x2apic",
            smp: SMP_288,
            append: "hz=100 watchdog_thresh=10 hung_task_timeout_secs=120 workload=pipe,rounds=1000,mode=cross",
            memory_mib: 1024,
            slots: 2,
            timeout_s: 900,
            long: true,
            check: check_smp288,
            ..BASE
        },
        Scenario {
            name: "topo-2s2c2t",
            smp: "8,sockets=2,cores=2,threads=2",
            check: check_topo_2s2c2t,
            ..BASE
        },
        Scenario {
            name: "topo-1s4c2t",
            smp: "8,sockets=1,cores=4,threads=2",
            check: check_topo_1s4c2t,
            ..BASE
        },
        Scenario {
            name: "topo-4s1c1t",
            smp: "4,sockets=4,cores=1,threads=1",
            check: check_topo_4s1c1t,
            ..BASE
        },
        Scenario {
            name: "topo-numa2",
            smp: "8,sockets=2,cores=4",
            numa_nodes: 2,
            check: check_topo_numa2,
            ..BASE
        },
        Scenario {
            name: "apic-xapic",
            smp: "8",
            cpu: "qemu64",
            check: check_xapic,
            ..BASE
        },
        Scenario {
            name: "apic-x2apic",
            smp: "8",
            cpu: "max",
            check: check_x2apic,
            ..BASE
        },
        Scenario {
            name: "no-acpi",
            smp: "4",
            no_acpi: true,
            check: check_no_acpi,
            ..BASE
        },
    ]
}
