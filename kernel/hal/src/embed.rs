//! Embedding ring-3 machine code written in assembly: [`user_program!`](crate::user_program).
//!
//! Some self-tests need user programs that control registers or fault in exact ways, which
//! only assembly can write. They live with the self-tests as `.S` files; this macro
//! assembles one into the kernel image as *data* and gives the kernel a safe function that
//! returns its bytes, which a self-test copies into a fresh user address space.
//!
//! Why the macro is here: assembling text into the image (`global_asm!`) and turning two
//! linker labels into a slice are `unsafe` operations, and the kernel crate forbids
//! `unsafe`. Code a macro expands comes from the crate that defines the macro, so the HAL
//! owns it and answers for it (`SAFETY` below); the compiler does not report another
//! crate's macro expansion against the kernel's `forbid(unsafe_code)`.

/// Embed the assembly text `$text` (usually `include_str!("prog.S")`) as ring-3 machine code
/// and define `$vis fn $name() -> &'static [u8]` returning its bytes.
///
/// The text is assembled in Intel syntax into a read-only, non-executable data section of
/// the kernel (`.rodata.tally_user_programs`): the kernel never jumps into it. It must be
/// position-independent (it runs wherever the test maps it) and must not switch sections.
/// `NAME = const VALUE` operands are substituted for `{NAME}` in the text, which is how
/// system-call numbers come from `tally_uapi` instead of being written as numbers; literal
/// braces in the text are written `{{` and `}}`.
///
/// ```ignore
/// hal::user_program!(pub fn smoke = include_str!("smoke.S"), SYS_WRITE = const SYS_WRITE);
/// ```
#[macro_export]
macro_rules! user_program {
    ($vis:vis fn $name:ident = $text:expr $(, $op:ident = const $val:expr)* $(,)?) => {
        ::core::arch::global_asm!(
            ".pushsection .rodata.tally_user_programs,\"a\"",
            ".balign 16",
            concat!(".global tally_uprog_", stringify!($name), "_start"),
            concat!(".global tally_uprog_", stringify!($name), "_end"),
            concat!("tally_uprog_", stringify!($name), "_start:"),
            $text,
            concat!("tally_uprog_", stringify!($name), "_end:"),
            ".popsection",
            $($op = const $val,)*
        );

        /// The machine code of this ring-3 test program (see its `.S` file).
        $vis fn $name() -> &'static [u8] {
            unsafe extern "C" {
                #[link_name = concat!("tally_uprog_", stringify!($name), "_start")]
                static START: u8;
                #[link_name = concat!("tally_uprog_", stringify!($name), "_end")]
                static END: u8;
            }
            let (start, end) = (&raw const START, &raw const END);
            // SAFETY: both symbols are labels the `global_asm!` above defines around the
            // program's bytes, in one read-only section, `end` at or after `start`; the
            // bytes between them are initialised by the assembler, never written, and live
            // as long as the kernel image.
            unsafe { ::core::slice::from_raw_parts(start, end as usize - start as usize) }
        }
    };
}
