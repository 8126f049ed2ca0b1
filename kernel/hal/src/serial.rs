//! COM1, the console: a 16550 UART at I/O port 0x3F8, driven by the `uart_16550` crate;
//! and COM2 at 0x2F8, a raw output channel to the host (`/dev/ttyS1`).
//!
//! QEMU connects COM1 to the terminal (`-serial stdio`), so this is where every line the
//! kernel prints goes, and where tests read the kernel's output.
//!
//! **Input.** What the terminal types arrives in the UART's receive FIFO; with the "data
//! ready" interrupt enabled ([`enable_rx_interrupt`]) the UART raises IRQ 4 as bytes come
//! in (at the FIFO's trigger level, or after a few character times of silence), and the
//! kernel's console driver (`drivers/tty.rs`) drains the FIFO with [`receive`] in its
//! handler.
//!
//! **Flow control.** When the kernel's input buffer is full it turns the "data ready"
//! interrupt off ([`disable_rx_interrupt`]) and leaves what arrives in the UART's FIFO; a
//! full FIFO makes QEMU stop reading its side (the terminal or a pipe), so the sender waits
//! instead of losing bytes. Turning the interrupt back on ([`enable_rx_interrupt`]) with
//! bytes waiting raises IRQ 4 at once.
//!
//! **The cursor's column.** Everything written to COM1 passes through here, so this module
//! keeps the column the terminal's cursor is at ([`column`]), as Linux's tty keeps
//! `tty->column`: the line discipline needs it to erase a tab typed after a prompt.
//!
//! **Loopback**, for tests: with the modem control register's LOOP bit set, the UART feeds
//! what it transmits straight back into its own receiver instead of the wire — a byte
//! written to the data register arrives as input, with its interrupt, exactly as if it had
//! been typed ([`set_loopback`], [`send_raw`]). While it is on, nothing printed reaches the
//! terminal, so a test keeps that window short and silent.

use core::fmt::Write;
use core::sync::atomic::{AtomicUsize, Ordering};
use spin::Mutex;
use uart_16550::backend::PioBackend;
use uart_16550::spec::registers::IER;
use uart_16550::{Config, Uart16550Tty};
use x86_64::instructions::port::Port;

const COM1: u16 = 0x3f8;
/// Modem control register (offset 4) and its loopback bit.
const MCR_PORT: u16 = COM1 + 4;
const MCR_LOOP: u8 = 1 << 4;

static PORT: Mutex<Option<Uart16550Tty<PioBackend>>> = Mutex::new(None);
/// The cursor's column on the console, as far as what was written tells (see the module doc).
static COLUMN: AtomicUsize = AtomicUsize::new(0);

/// COM2 (`/dev/ttyS1`): a raw byte channel to the host, which `cargo xtask run` attaches
/// to a file (taskstats captures). Absent if the machine has no second UART.
const COM2: u16 = 0x2f8;
static PORT2: Mutex<Option<Uart16550Tty<PioBackend>>> = Mutex::new(None);

/// Program the UART (8-N-1, FIFO on). Until this runs, output is dropped.
pub fn init() {
    // SAFETY: 0x3F8..0x3FF is COM1 on every PC and QEMU `pc` machine, and this module is the
    // only code that touches those ports.
    let tty = unsafe { Uart16550Tty::new_port(COM1, Config::default()) };
    *PORT.lock() = tty.ok();
    // SAFETY: 0x2F8..0x2FF is COM2 on the PC; only this module touches those ports. The
    // driver's probe fails (and COM2 stays absent) if no UART answers there.
    let tty2 = unsafe { Uart16550Tty::new_port(COM2, Config::default()) };
    *PORT2.lock() = tty2.ok();
}

/// Is there a second serial port?
pub fn com2_present() -> bool {
    super::cpu::without_interrupts(|| PORT2.lock().is_some())
}

/// Send `bytes` unchanged on COM2 (dropped if there is none).
pub fn com2_write(bytes: &[u8]) {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT2.lock().as_mut() {
            port.inner_mut().send_bytes_exact(bytes);
        }
    });
}

/// Write a string with interrupts disabled, so an interrupt handler that prints cannot
/// deadlock on the port lock held by the code it interrupted.
pub fn write_str(s: &str) {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            let _ = port.write_str(s);
            track_column(s.as_bytes());
        }
    });
}

/// Write bytes as a tty's output does for its echo: unchanged (a backspace is just a
/// backspace, UTF-8 passes through byte by byte), except `\n`, sent as CR LF (`ONLCR`).
pub fn write_bytes(bytes: &[u8]) {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            for chunk in bytes.split_inclusive(|&b| b == b'\n') {
                match chunk.split_last() {
                    Some((b'\n', head)) => {
                        port.inner_mut().send_bytes_exact(head);
                        port.inner_mut().send_bytes_exact(b"\r\n");
                    }
                    _ => port.inner_mut().send_bytes_exact(chunk),
                }
            }
            track_column(bytes);
        }
    });
}

/// The column the console's cursor is at (0: the start of a line).
pub fn column() -> usize {
    COLUMN.load(Ordering::Relaxed)
}

/// Follow the cursor over `bytes` written (the driver's `write_str` sends a backspace as
/// `"\b \b"`: still one column back). A character counts one column, a wide one too.
fn track_column(bytes: &[u8]) {
    let mut col = COLUMN.load(Ordering::Relaxed);
    for &b in bytes {
        col = match b {
            b'\n' | b'\r' => 0,
            0x08 | 0x7f => col.saturating_sub(1),
            b'\t' => (col / 8 + 1) * 8,
            0..=0x1f => col,
            // UTF-8 continuation bytes add nothing to the character they continue.
            0x80..=0xbf => col,
            _ => col + 1,
        };
    }
    COLUMN.store(col, Ordering::Relaxed);
}

/// Write from a panic or fault report, even if the interrupted code holds the port lock
/// (it will never run again, so taking the port from it is sound).
pub fn write_str_emergency(s: &str) {
    if let Some(mut guard) = PORT.try_lock() {
        if let Some(port) = guard.as_mut() {
            let _ = port.write_str(s);
        }
        return;
    }
    // SAFETY: we are on the way to stopping the machine; the lock holder was interrupted
    // and never resumes, so no one else uses the port from here on.
    unsafe { PORT.force_unlock() };
    write_str(s);
}

/// Let the UART interrupt (IRQ 4) when received data is ready.
pub fn enable_rx_interrupt() {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            port.inner_mut().enable_interrupts(IER::DATA_READY);
        }
    });
}

/// Stop the UART interrupting for received data: bytes stay in its FIFO (flow control,
/// see the module documentation).
pub fn disable_rx_interrupt() {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            port.inner_mut().disable_interrupts(IER::DATA_READY);
        }
    });
}

/// Is the "data ready" interrupt on?
pub fn rx_interrupt_enabled() -> bool {
    super::cpu::without_interrupts(|| {
        PORT.lock().as_mut().is_some_and(|p| p.inner_mut().ier().contains(IER::DATA_READY))
    })
}

/// One received byte, if the UART holds one (reading it takes it out of the FIFO).
pub fn receive() -> Option<u8> {
    super::cpu::without_interrupts(|| PORT.lock().as_mut().and_then(|p| p.inner_mut().try_receive_byte().ok()))
}

/// Switch the UART's loopback mode on or off (see the module documentation).
pub fn set_loopback(on: bool) {
    super::cpu::without_interrupts(|| {
        let _guard = PORT.lock();
        let mut mcr: Port<u8> = Port::new(MCR_PORT);
        // SAFETY: COM1's modem control register; only the LOOP bit changes (DTR, RTS and
        // OUT2, set by the driver's init, stay), and the port lock keeps the driver out.
        unsafe {
            let v = mcr.read();
            mcr.write(if on { v | MCR_LOOP } else { v & !MCR_LOOP });
        }
    });
}

/// Transmit `bytes` as they are (no UTF-8 handling): in loopback mode they come back as
/// input. Waits for room in the transmit FIFO.
pub fn send_raw(bytes: &[u8]) {
    super::cpu::without_interrupts(|| {
        if let Some(port) = PORT.lock().as_mut() {
            port.inner_mut().send_bytes_exact(bytes);
        }
    });
}
