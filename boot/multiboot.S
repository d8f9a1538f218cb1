/* Multiboot 1 and Multiboot 2 headers and the 32-bit to 64-bit switch of the
 * boot CPU.
 *
 * A Multiboot 1 loader (QEMU's -kernel, GRUB's `multiboot`) enters here with
 * EAX = 0x2BADB002, a Multiboot 2 loader (GRUB's `multiboot2`, on BIOS and on
 * UEFI alike, as no EFI boot-services tag is requested) with EAX = 0x36D76289;
 * both in 32-bit protected mode, paging off, EBX = physical address of the
 * boot information, which kernel_entry hands to Rust's parser untouched.
 * Both headers carry the load addresses (Multiboot 1's a.out kludge, Multiboot
 * 2's address and entry tags): the kernel is a 64-bit ELF that neither
 * protocol loads as one, so the loaders copy it as a flat image. We clear .bss, build
 * page tables that identity-map the first 4 GiB with 2 MiB pages (kernel, RAM
 * and the APIC/IOAPIC MMIO windows all live there), enable PAE, long mode,
 * paging, SSE, and jump to Rust's `kernel_entry(magic, info)`.
 */
    .section .multiboot, "a"
    .balign 4
multiboot_header:
    .long 0x1BADB002                       /* magic */
    .long 0x00010002                       /* flags: memory info, address fields */
    .long -(0x1BADB002 + 0x00010002)       /* checksum */
    .long multiboot_header                 /* header_addr */
    .long __kernel_start                   /* load_addr */
    .long __load_end                       /* load_end_addr */
    .long __kernel_end                     /* bss_end_addr */
    .long multiboot_entry                  /* entry_addr */

    /* Multiboot 2: 8-byte aligned, in the first 32 KiB; tags are 8-byte aligned. */
    .balign 8
multiboot2_header:
    .long 0xE85250D6                       /* magic */
    .long 0                                /* architecture: i386 protected mode */
    .long multiboot2_header_end - multiboot2_header
    .long -(0xE85250D6 + 0 + (multiboot2_header_end - multiboot2_header))
    .balign 8
    .word 2, 0                             /* address tag: type, flags */
    .long 24                               /* size */
    .long multiboot2_header                /* header_addr */
    .long __kernel_start                   /* load_addr */
    .long __load_end                       /* load_end_addr */
    .long __kernel_end                     /* bss_end_addr */
    .balign 8
    .word 3, 0                             /* entry address tag */
    .long 12
    .long multiboot_entry
    .balign 8
    .word 0, 0                             /* end tag */
    .long 8
multiboot2_header_end:

    .section .text.boot, "ax"
    .code32
    .global multiboot_entry
multiboot_entry:
    cli
    cld
    movl %eax, %esi                        /* keep magic and info across the bss clear */
    movl %ebx, %ebp

    /* Zero .bss (it holds the page tables and the boot stack). */
    movl $__load_end, %edi
    movl $__kernel_end, %ecx
    subl %edi, %ecx
    xorl %eax, %eax
    rep stosb

    /* PML4[0] -> PDPT; PDPT[0..3] -> four page directories of 512 x 2 MiB. */
    movl $boot_pdpt, %eax
    orl $0x3, %eax
    movl %eax, boot_pml4

    movl $boot_pd, %edi
    movl $boot_pdpt, %ebx
    movl $4, %ecx
1:  movl %edi, %eax
    orl $0x3, %eax
    movl %eax, (%ebx)
    addl $8, %ebx
    addl $4096, %edi
    loop 1b

    movl $boot_pd, %edi
    xorl %eax, %eax                        /* physical address, low 32 bits */
    xorl %edx, %edx                        /* high 32 bits */
    movl $2048, %ecx
2:  movl %eax, %ebx
    orl $0x83, %ebx                        /* present, writable, 2 MiB page */
    movl %ebx, (%edi)
    movl %edx, 4(%edi)
    addl $0x200000, %eax
    adcl $0, %edx
    addl $8, %edi
    loop 2b

    /* CR4: PAE, OSFXSR, OSXMMEXCPT. */
    movl %cr4, %eax
    orl $((1 << 5) | (1 << 9) | (1 << 10)), %eax
    movl %eax, %cr4

    movl $boot_pml4, %eax
    movl %eax, %cr3

    /* EFER: long mode enable, no-execute enable. */
    movl $0xC0000080, %ecx
    rdmsr
    orl $((1 << 8) | (1 << 11)), %eax
    wrmsr

    /* CR0: paging, protection, monitor coprocessor; clear emulation and task-switched. */
    movl %cr0, %eax
    andl $~((1 << 2) | (1 << 3)), %eax
    orl $((1 << 31) | (1 << 0) | (1 << 1)), %eax
    movl %eax, %cr0

    lgdt boot_gdt_ptr
    ljmp $0x08, $long_mode_entry

    .code64
long_mode_entry:
    movw $0x10, %ax
    movw %ax, %ds
    movw %ax, %es
    movw %ax, %ss
    xorw %ax, %ax
    movw %ax, %fs
    movw %ax, %gs
    movabsq $boot_stack_top, %rsp
    movl %esi, %edi                        /* magic */
    movl %ebp, %esi                        /* multiboot info */
    xorl %ebp, %ebp                        /* a zero frame pointer ends backtraces */
    call kernel_entry
3:  cli
    hlt
    jmp 3b

    .section .rodata
    .balign 16
    .global boot_gdt
boot_gdt:
    .quad 0                                /* null */
    .quad 0x00AF9A000000FFFF               /* 0x08: 64-bit code */
    .quad 0x00CF92000000FFFF               /* 0x10: data */
boot_gdt_end:
    .balign 8
    .global boot_gdt_ptr
boot_gdt_ptr:
    .word boot_gdt_end - boot_gdt - 1
    .quad boot_gdt

    .section .bss.boot, "aw", @nobits
    .balign 4096
    .global boot_pml4
boot_pml4:
    .skip 4096
boot_pdpt:
    .skip 4096
boot_pd:
    .skip 4096 * 4
boot_stack:
    .skip 64 * 1024
boot_stack_top:
