/* Interrupt and exception entry.
 *
 * One 16-byte stub per vector pushes a dummy error code where the CPU pushes
 * none, then the vector number, and joins isr_common. isr_common saves every
 * general register and the FPU/SSE state (fxsave, 512 bytes), so that Rust
 * handlers, which use SSE like all host-target code, can never clobber the
 * interrupted context. Every vector runs on an IST stack (see the IDT setup),
 * so the red zone of interrupted code is never overwritten.
 *
 * The frame built here is `TrapFrame` in kernel/src/arch/trap.rs:
 *   [fxsave 512][r15 .. rax][vector][error][rip cs rflags rsp ss]
 * isr_dispatch(frame) returns the frame to resume, which lets a context
 * switch return into another task's saved frame. The reschedule IPI's stub
 * joins irq_resched instead, which calls its handler directly.
 *
 * Exceptions (vectors 0..31) build the frame on their own IST stack and run
 * the handler below it (isr_common). Interrupts (32..255) arrive on IST1, which points at the end of the running
 * task's saved-frame area (arch/context.rs): the CPU and irq_common write the
 * frame straight into the task, then switch to the CPU's handler stack (its
 * top at gs:16) before calling isr_dispatch. A switch therefore copies
 * nothing: the next task's frame is restored from where it was saved.
 */
/* Pushes the general registers and the FPU/SSE state below the vector. */
.macro save_frame
    pushq %rax
    pushq %rbx
    pushq %rcx
    pushq %rdx
    pushq %rsi
    pushq %rdi
    pushq %rbp
    pushq %r8
    pushq %r9
    pushq %r10
    pushq %r11
    pushq %r12
    pushq %r13
    pushq %r14
    pushq %r15
    subq $512, %rsp
    fxsave64 (%rsp)
.endm

    .section .text
    .balign 16
    .global isr_stubs
isr_stubs:
    .set vec, 0
    .rept 256
    .balign 16
    .if (vec == 8) || ((vec >= 10) && (vec <= 14)) || (vec == 17) || (vec == 21) || (vec == 29) || (vec == 30)
    pushq $vec
    .else
    pushq $0
    pushq $vec
    .endif
    .if vec < 32
    jmp isr_common
    .elseif vec == 0xF1
    jmp irq_resched
    .else
    jmp irq_common
    .endif
    .set vec, vec + 1
    .endr

    .balign 16
isr_common:
    save_frame
    movq %rsp, %rdi
    cld
    call isr_dispatch
    movq %rax, %rsp
    /* Restores the frame at rsp and returns into it (both paths). */
restore_frame:
    fxrstor64 (%rsp)
    addq $512, %rsp
    popq %r15
    popq %r14
    popq %r13
    popq %r12
    popq %r11
    popq %r10
    popq %r9
    popq %r8
    popq %rbp
    popq %rdi
    popq %rsi
    popq %rdx
    popq %rcx
    popq %rbx
    popq %rax
    addq $16, %rsp
    iretq

    .balign 16
irq_common:
    save_frame
    movq %rsp, %rdi
    movq %gs:16, %rsp
    cld
    call isr_dispatch
    movq %rax, %rsp
    jmp restore_frame

/* The reschedule IPI (RESCHED_VECTOR, 0xF1): irq_common with the scheduler's
 * hook called directly (through gs:40 once it is set, resched_dispatch
 * before), not through the vector dispatch. It is on every remote wakeup's
 * path. */
    .balign 16
irq_resched:
    save_frame
    movq %rsp, %rdi
    movq %gs:16, %rsp
    cld
    /* The scheduler's IPI hook (gs:40, 0 before it runs here), called
     * directly; resched_dispatch before. */
    movq %gs:40, %rax
    testq %rax, %rax
    jz 2f
    call *%rax
3:  /* The IPI's switch usually resumes a task that blocked by a call (a
     * wakee, the IPI's reason): its frame takes schedule_call's short
     * resume, as in schedule_call itself. */
    cmpq $0x100, 632(%rax)          /* vector: SCHEDULE_CALL_FRAME? */
    je resume_call_frame
    movq %rax, %rsp
    jmp restore_frame
2:  call resched_dispatch
    jmp 3b

/*
 * schedule_call: a task gives up its CPU by calling this as a C function
 * (arch/context.rs `schedule()`), instead of raising SCHEDULE_VECTOR. It saves
 * the frame an interrupt would have saved, into the same place (the running
 * task's frame area, whose end is IST1, mirrored at gs:24), as if the
 * interrupt had hit the stub's final `ret` (schedule_call_ret): rip = that
 * `ret`, rsp = at the return address, the caller's RFLAGS. Only what a
 * C call preserves needs to be right: rbx, rbp, r12-r15 and the FPU control
 * state (fxsave); the other registers are the caller's to lose, and its
 * vector SCHEDULE_CALL_FRAME (0x100, beyond every real vector: see
 * arch/trap.rs) says so. Then it calls
 * the scheduler's schedule hook (gs:32, set before the CPU's scheduler runs,
 * which `give_up_cpu` checks: no dispatch on the vector) on the CPU's handler
 * stack, and restores the frame the hook returns through restore_frame and
 * iretq: resuming this task later returns from the call.
 */
    .global schedule_call
    .balign 16
schedule_call:
    pushfq
    cli
    movq %gs:24, %r11               /* end of the frame area */
    popq -24(%r11)                  /* rflags, as the caller had them */
    /* cs and ss (-32, -8) are not written: every frame of the area already
     * holds the kernel's 0x08 and 0x10 (arch/context.rs builds each frame
     * with them, and an interrupt, always from ring 0, saves the same). */
    /* rsp: at the return address, which stays there while the task is
     * switched out (nothing writes a switched-out task's stack); rip: the
     * `ret` below that takes it (a kernel address: a sign-extended imm32).
     * Resumed by restore_frame's iretq, the frame runs that `ret` too. */
    movq %rsp, -16(%r11)
    movq $schedule_call_ret, -40(%r11)
    movq $0x100, -56(%r11)          /* vector: SCHEDULE_CALL_FRAME */
    movq %rbx, -72(%r11)
    movq %rbp, -112(%r11)
    movq %r12, -152(%r11)
    movq %r13, -160(%r11)
    movq %r14, -168(%r11)
    movq %r15, -176(%r11)
    leaq -688(%r11), %rdi           /* the TrapFrame */
    fxsave64 (%rdi)
    movq %gs:16, %rsp
    /* No cld: called as a C function, the direction flag is already clear. */
    call *%gs:32                    /* the scheduler's schedule hook */
    /* A frame this stub saved (the usual case: the task resumed had blocked
     * or yielded) holds only what it wrote: restore that and return into the
     * caller, instead of every register and iretq. */
    cmpq $0x100, 632(%rax)          /* vector: SCHEDULE_CALL_FRAME? */
    jne 1f
    /* The short resume of a frame schedule_call saved, at rax (also
     * irq_resched's). */
resume_call_frame:
    fxrstor64 (%rax)
    movq 512(%rax), %r15
    movq 520(%rax), %r14
    movq 528(%rax), %r13
    movq 536(%rax), %r12
    movq 576(%rax), %rbp
    movq 616(%rax), %rbx
    movq 672(%rax), %rsp            /* at the return address */
    /* rflags through the stack below the return address (the callee's,
     * free): interrupts come back on only with every register restored, and
     * an interrupt before the `ret` saves a frame that resumes at it. */
    pushq 664(%rax)
    popfq
schedule_call_ret:
    ret
1:  movq %rax, %rsp
    jmp restore_frame
