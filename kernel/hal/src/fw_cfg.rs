//! QEMU's firmware configuration device (fw_cfg): how the kernel gets its command line.
//!
//! `cargo xtask` passes `-fw_cfg name=opt/tally/cmdline,string=...`; the kernel finds that
//! file in fw_cfg's directory and reads it through two I/O ports: a 16-bit selector at 0x510
//! and a byte-wide data port at 0x511. This is the same device Linux reads `-append` from.

use x86_64::instructions::port::Port;

const SELECTOR: u16 = 0x510;
const DATA: u16 = 0x511;
const SIGNATURE: u16 = 0x0000;
const FILE_DIR: u16 = 0x0019;

fn select(key: u16) {
    // SAFETY: the fw_cfg selector port only changes which item the data port streams.
    unsafe { Port::<u16>::new(SELECTOR).write(key) };
}

fn read_bytes(buf: &mut [u8]) {
    let mut port = Port::<u8>::new(DATA);
    for b in buf {
        // SAFETY: reading the fw_cfg data port streams the selected item; past its end QEMU
        // returns zeros.
        *b = unsafe { port.read() };
    }
}

/// Copy the fw_cfg file `name` into `out`; returns its full length (which may exceed
/// `out.len()`: the excess is not copied), or `None` without QEMU or without that file.
pub fn read_file(name: &str, out: &mut [u8]) -> Option<usize> {
    select(SIGNATURE);
    let mut sig = [0u8; 4];
    read_bytes(&mut sig);
    if &sig != b"QEMU" {
        return None;
    }
    select(FILE_DIR);
    let mut count = [0u8; 4];
    read_bytes(&mut count);
    for _ in 0..u32::from_be_bytes(count) {
        // struct FWCfgFile { be32 size; be16 select; u16 reserved; char name[56]; }
        let mut entry = [0u8; 64];
        read_bytes(&mut entry);
        let size = u32::from_be_bytes([entry[0], entry[1], entry[2], entry[3]]) as usize;
        let key = u16::from_be_bytes([entry[4], entry[5]]);
        let raw_name = &entry[8..];
        let len = raw_name.iter().position(|&b| b == 0).unwrap_or(raw_name.len());
        if &raw_name[..len] == name.as_bytes() {
            select(key);
            let n = size.min(out.len());
            read_bytes(&mut out[..n]);
            return Some(size);
        }
    }
    None
}
