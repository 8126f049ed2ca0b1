//! The two 8259 programmable interrupt controllers (master at 0x20, slave at 0xA0).
//!
//! At power-on they deliver IRQs 0–7 on vectors 8–15, which collide with CPU exceptions,
//! so `init` remaps them to vectors 32–47. After servicing a line the kernel sends an
//! end-of-interrupt (EOI); for lines 8–15 both chips need one.
//!
//! A *spurious* IRQ 7 (or 15) is one the PIC signalled but then withdrew (noise, or a line
//! dropping too early): the CPU still takes the vector, but the PIC's in-service register
//! (ISR) has no bit set for it. Such an interrupt must not get an EOI (that would end some
//! other, real interrupt) — except that a spurious IRQ 15 was real to the master (cascade
//! line 2), which therefore does need one.

use pic8259::ChainedPics;
use spin::Mutex;
use x86_64::instructions::port::Port;

/// Vector of IRQ line 0; lines 0–15 use vectors 32–47.
pub const IRQ_BASE: u8 = 32;
/// The legacy IRQ lines of the two chips (0–15).
pub const NR_LINES: usize = 16;
const MASTER_CMD: u16 = 0x20;
const SLAVE_CMD: u16 = 0xa0;
/// OCW3 command: the next read of the command port returns the ISR.
const OCW3_READ_ISR: u8 = 0x0b;

// SAFETY: 32..48 does not overlap the CPU exception vectors, and the PICs live at the fixed
// PC ports the crate uses.
static PICS: Mutex<ChainedPics> = Mutex::new(unsafe { ChainedPics::new(IRQ_BASE, IRQ_BASE + 8) });

/// Remap both PICs and mask every line; the kernel's `irq` floor unmasks each line as it
/// installs that line's handler.
pub fn init() {
    let mut pics = PICS.lock();
    // SAFETY: interrupts are still disabled at this point of bring-up; the PICs are
    // reprogrammed before any IRQ can reach the CPU.
    unsafe {
        pics.initialize();
        // Everything masked except the cascade (line 2), which must stay open for 8–15.
        pics.write_masks(0xfb, 0xff);
    }
}

/// Let IRQ `line` through.
pub fn unmask(line: u8) {
    let mut pics = PICS.lock();
    // SAFETY: reading and writing the mask registers only changes which lines are delivered.
    unsafe {
        let [mut m, mut s] = pics.read_masks();
        if line < 8 {
            m &= !(1 << line);
        } else {
            s &= !(1 << (line - 8));
        }
        pics.write_masks(m, s);
    }
}

/// Whether `line` is really being serviced: its bit in the owning PIC's ISR.
pub fn in_service(line: u8) -> bool {
    let (port, bit) = if line < 8 { (MASTER_CMD, line) } else { (SLAVE_CMD, line - 8) };
    let mut cmd = Port::<u8>::new(port);
    // SAFETY: OCW3 selects which register the next command-port read returns; it does not
    // change interrupt state.
    let isr = unsafe {
        cmd.write(OCW3_READ_ISR);
        cmd.read()
    };
    isr & (1 << bit) != 0
}

/// End of interrupt for a real IRQ on `line`.
pub fn end_of_interrupt(line: u8) {
    // SAFETY: called once per serviced interrupt of that line, after the handler ran.
    unsafe { PICS.lock().notify_end_of_interrupt(IRQ_BASE + line) };
}

/// EOI to the master only: what a spurious IRQ 15 needs (the cascade line was real).
pub fn end_of_interrupt_master_only() {
    // SAFETY: the master did deliver the cascade interrupt, so it has an ISR bit to clear.
    unsafe { Port::<u8>::new(MASTER_CMD).write(0x20) };
}
