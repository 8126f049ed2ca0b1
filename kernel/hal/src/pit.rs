//! The 8253/8254 programmable interval timer: input clock 1 193 182 Hz, three channels.
//!
//! * Channel 0 drives IRQ 0: programmed as a rate generator, it is the scheduler tick.
//! * Channel 2 can be gated and polled through port 0x61 without any interrupt, which makes
//!   it the reference for measuring the TSC's frequency at boot (as Linux's
//!   `pit_calibrate_tsc` does).

use tally_clock::PIT_HZ;
use x86_64::instructions::port::Port;

/// The IRQ line channel 0 fires on: the tick.
pub const IRQ_LINE: u8 = 0;

const CH0_DATA: u16 = 0x40;
const CH2_DATA: u16 = 0x42;
const COMMAND: u16 = 0x43;
const GATE: u16 = 0x61;

/// Make channel 0 fire IRQ 0 at `hz` per second; returns the divisor used (the real rate
/// is `PIT_HZ / divisor`).
pub fn start_periodic(hz: u32) -> u16 {
    let divisor = (PIT_HZ + hz as u64 / 2) / hz.max(19) as u64;
    let divisor = divisor.clamp(1, 0xffff) as u16;
    // SAFETY: command 0x34 = channel 0, lobyte/hibyte, mode 2 (rate generator), binary;
    // followed by the two divisor bytes, as the 8254 protocol requires.
    unsafe {
        Port::<u8>::new(COMMAND).write(0x34);
        let mut data = Port::<u8>::new(CH0_DATA);
        data.write(divisor as u8);
        data.write((divisor >> 8) as u8);
    }
    divisor
}

/// Count TSC ticks while PIT channel 2 counts down `pit_ticks` (< 65536) periods.
/// Returns the TSC delta. Interrupts should be off so the measurement is not stretched.
pub fn measure_tsc(pit_ticks: u16) -> u64 {
    let mut gate = Port::<u8>::new(GATE);
    // SAFETY: port 0x61 bit 0 gates channel 2, bit 1 enables the speaker (kept off), bit 5
    // reads channel 2's output. Command 0xB0 = channel 2, lobyte/hibyte, mode 0 (interrupt on
    // terminal count), whose output goes high when the count reaches zero.
    unsafe {
        let v = gate.read();
        gate.write((v & !0x02) | 0x01);
        Port::<u8>::new(COMMAND).write(0xb0);
        let mut data = Port::<u8>::new(CH2_DATA);
        data.write(pit_ticks as u8);
        data.write((pit_ticks >> 8) as u8);
        let start = super::tsc::read();
        while gate.read() & 0x20 == 0 {
            core::hint::spin_loop();
        }
        super::tsc::read() - start
    }
}
