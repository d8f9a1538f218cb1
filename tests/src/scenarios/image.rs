//! The GRUB image under SeaBIOS and UEFI; memory, machine and command-line edge cases; crash reports.
//! Part of [`super::all`]; the scenario type, shared constants and checks are in `scenarios.rs`.

use super::*;

pub(super) fn scenarios() -> Vec<Scenario> {
    vec![
        // The GRUB image (Multiboot 2, RSDP from GRUB's ACPI tag) under SeaBIOS and UEFI.
        Scenario {
            name: "image-bios-smp4",
            boot: Boot::Image(Firmware::SeaBios),
            check: check_image_bios_smp4,
            ..BASE
        },
        Scenario {
            name: "image-bios-2s2c2t",
            smp: "8,sockets=2,cores=2,threads=2",
            boot: Boot::Image(Firmware::SeaBios),
            check: check_image_bios_2s2c2t,
            ..BASE
        },
        Scenario {
            name: "image-bios-no-acpi",
            no_acpi: true,
            boot: Boot::Image(Firmware::SeaBios),
            check: check_image_bios_no_acpi,
            ..BASE
        },
        Scenario {
            name: "image-uefi-smp4",
            boot: Boot::Image(Firmware::Ovmf),
            timeout_s: 120,
            check: check_image_uefi_smp4,
            ..BASE
        },
        Scenario {
            name: "image-uefi-2s2c2t",
            smp: "8,sockets=2,cores=2,threads=2",
            boot: Boot::Image(Firmware::Ovmf),
            timeout_s: 120,
            check: check_image_uefi_2s2c2t,
            ..BASE
        },
        Scenario {
            name: "image-uefi-multiboot1",
            boot: Boot::ImageMultiboot1(Firmware::Ovmf),
            timeout_s: 120,
            check: check_image_uefi_multiboot1,
            ..BASE
        },
        Scenario {
            name: "memory-too-small-smp31",
            smp: "31",
            memory_mib: 32,
            expect: Outcome::Oom,
            check: check_memory_too_small,
            ..BASE
        },
        Scenario {
            // 47 MiB usable is the need at the time of writing; 52 leaves room for the image to grow
            name: "memory-enough-smp31",
            smp: "31",
            memory_mib: 52,
            append: MICROVM_APPEND,
            check: check_memory_enough,
            timeout_s: 120,
            ..BASE
        },
        Scenario {
            // No port 0x61 (no PC speaker): the PIT's channel 2 cannot be read, channel 0 can.
            name: "machine-microvm",
            qemu_extra: &["-machine", "microvm"],
            append: MICROVM_APPEND,
            check: check_microvm,
            ..BASE
        },
        Scenario {
            // No PIT at all: nothing to calibrate the TSC against, a clean refusal.
            name: "machine-no-pit",
            smp: "2",
            qemu_extra: &["-machine", "microvm,pit=off"],
            expect: Outcome::Failure,
            check: check_no_pit,
            ..BASE
        },
        Scenario {
            name: "cmdline-malformed",
            append: MALFORMED,
            check: check_malformed_cmdline,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "workload-params-malformed",
            smp: "1",
            append: WORKLOAD_PARAMS_MALFORMED,
            check: check_workload_params_malformed,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "workload-too-many-threads",
            smp: "2",
            memory_mib: TOO_MANY_THREADS_MIB,
            append: WORKLOAD_TOO_MANY_THREADS,
            expect: Outcome::Failure,
            check: check_too_many_threads,
            complaints: true,
            ..BASE
        },
        Scenario {
            // The same 400 threads fit at the default memory (`-icount`: the run's IPIs and
            // wakeups do not depend on host load).
            name: "workload-400-threads",
            smp: "2",
            icount: true,
            append: WORKLOAD_400_THREADS,
            check: check_400_threads,
            ..BASE
        },
        Scenario {
            name: "workload-too-much-heap",
            smp: "2",
            append: WORKLOAD_TOO_MUCH_HEAP,
            expect: Outcome::Failure,
            check: check_too_much_heap,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "workload-schbench-no-sample",
            smp: "2",
            append: WORKLOAD_SCHBENCH_NO_SAMPLE,
            expect: Outcome::Failure,
            check: check_schbench_no_sample,
            complaints: true,
            ..BASE
        },
        Scenario {
            name: "workload-help",
            smp: "2",
            append: "workload=help",
            check: check_workload_help,
            ..BASE
        },
        Scenario {
            name: "crash-page-fault",
            smp: "2",
            append: "test_crash=page_fault",
            expect: Outcome::Exception,
            check: check_page_fault,
            ..BASE
        },
        Scenario {
            name: "crash-divide-error",
            smp: "2",
            append: "test_crash=divide_error",
            expect: Outcome::Exception,
            check: check_divide_error,
            ..BASE
        },
        Scenario {
            name: "crash-panic",
            smp: "2",
            append: "test_crash=panic",
            expect: Outcome::Panic,
            check: check_panic,
            ..BASE
        },
    ]
}
