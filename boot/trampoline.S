/* Real-mode trampoline for the application processors.
 *
 * The boot CPU copies the bytes between ap_trampoline_start and
 * ap_trampoline_end to physical address AP_TRAMPOLINE (0x8000), fills the
 * parameter slots at the end, and sends INIT-SIPI-SIPI with vector 0x08. The
 * AP starts at 0x0800:0000 in real mode, loads the kernel's boot GDT, switches
 * straight to long mode (PAE, LME, PE and PG together) on the boot CPU's page
 * tables, takes the stack from its slot and calls the Rust entry with the
 * argument slot. All addresses are computed relative to the copy at 0x8000.
 */
    .set AP_TRAMPOLINE, 0x8000

    .section .rodata.trampoline, "a"
    .balign 16
    .code16
    .global ap_trampoline_start
ap_trampoline_start:
    cli
    cld
    xorw %ax, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    lgdtl AP_TRAMPOLINE + tramp_gdt_ptr - ap_trampoline_start

    movl %cr4, %eax
    orl $((1 << 5) | (1 << 9) | (1 << 10)), %eax   /* PAE, OSFXSR, OSXMMEXCPT */
    movl %eax, %cr4
    movl AP_TRAMPOLINE + tramp_cr3 - ap_trampoline_start, %eax
    movl %eax, %cr3
    movl $0xC0000080, %ecx                        /* EFER: LME, NXE */
    rdmsr
    orl $((1 << 8) | (1 << 11)), %eax
    wrmsr
    movl %cr0, %eax
    andl $~((1 << 2) | (1 << 3)), %eax            /* no FPU emulation, not task-switched */
    orl $((1 << 31) | (1 << 0) | (1 << 1)), %eax  /* PG, PE, MP */
    movl %eax, %cr0
    ljmpl $0x08, $(AP_TRAMPOLINE + tramp_long_mode - ap_trampoline_start)

    .code64
tramp_long_mode:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movq AP_TRAMPOLINE + tramp_stack - ap_trampoline_start, %rsp
    movq AP_TRAMPOLINE + tramp_arg - ap_trampoline_start, %rdi
    xorl %ebp, %ebp
    movq AP_TRAMPOLINE + tramp_entry - ap_trampoline_start, %rax
    pushq $0                                      /* fake return address ends backtraces */
    jmpq *%rax

    .balign 8
tramp_gdt_ptr:
    .word 23
    .long boot_gdt
    .balign 8
    .global ap_tramp_cr3
ap_tramp_cr3:
tramp_cr3:
    .quad 0
    .global ap_tramp_stack
ap_tramp_stack:
tramp_stack:
    .quad 0
    .global ap_tramp_entry
ap_tramp_entry:
tramp_entry:
    .quad 0
    .global ap_tramp_arg
ap_tramp_arg:
tramp_arg:
    .quad 0
    .global ap_trampoline_end
ap_trampoline_end:
