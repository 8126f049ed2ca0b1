//! A kernel panic: report where and why, then end the run with a failure status.

use core::panic::PanicInfo;

use super::console::emergency_print;
use hal::qemu::ExitCode;

#[panic_handler]
fn panic(info: &PanicInfo) -> ! {
    match info.location() {
        Some(l) => emergency_print(format_args!(
            "\nKERNEL PANIC at {}:{}:{}: {}\n",
            l.file(),
            l.line(),
            l.column(),
            info.message()
        )),
        None => emergency_print(format_args!("\nKERNEL PANIC: {}\n", info.message())),
    }
    hal::qemu::exit(ExitCode::Failure)
}
