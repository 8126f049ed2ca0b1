//! # Loading a Linux program: `load`, `spawn`, and exec in place
//!
//! [`load`] turns a path into a memory map ready to run, the way Linux's `binfmt_elf` does
//! for a static program: find the file, check and plan its ELF image (`tally_loader`'s
//! bookkeeping, tested on the host against hostile input: `ET_EXEC`, or a static PIE loaded
//! at `USER_IMAGE_BASE`), build the System V initial stack (argv, envp — [`DEFAULT_ENV`] when
//! the caller gives none — and Linux's auxiliary vector, with `AT_RANDOM`'s 16 bytes from
//! `base::random`), make a fresh memory map and give it the segments and the stack
//! (`vm.rs`). Two kinds of file:
//!
//! * **the ramdisk** (`/bin/x`, `/test/x`): in memory already, so each segment's bytes are
//!   copied into fresh pages at once;
//! * **`/var`** (the FAT disk, `crate::fs`): only the headers are read at load; each segment
//!   becomes a file-backed region, paged in on demand at the first touch of each page — a
//!   major fault and PAGING_SLEEP (`vm_file.rs`).
//!
//! Everything is built before any process changes, so a failure at any step frees what was
//! built and leaves no trace. `spawn` ([`spawn_program`]) starts the result as a new process,
//! child of the caller, as `posix_spawn` does; [`exec_program`] turns the *calling* kernel
//! thread into it (`user.rs`): init does, once the kernel's part of boot is done; `execve`
//! replaces a process's image with it. The steps with their errors: `docs/user-mode.md`.

use alloc::sync::Arc;
use alloc::vec::Vec;
use tally_loader::elf::{self, ElfPlan, Limits, Segment};
use tally_loader::{ExecError, StartInfo};
use tally_runqueue::SleepKind;
use tally_tasktable::CreateKind;
use tally_uapi::errno::{EACCES, EINVAL};
use tally_uapi::fs::path as var_path;

use super::create::SpawnAttr;

use super::ramdisk;
use super::user::{exec_current, exec_replace, start_user_task, UserStart};
use super::vm::{Prot, Vm, USER_IMAGE_BASE, USER_MIN_ADDR, USER_MMAP_BASE, USER_STACK_TOP};
use super::vm_file::FileSegment;
use crate::fs::VarFile;
use crate::sched;

pub use tally_loader::DEFAULT_ENV;

/// A program loaded and ready to start: its memory map, where it starts, its initial stack
/// pointer (pointing at `argc`) and its name (`comm`: the file's base name, at most 15
/// bytes, NUL-padded, as Linux's `__set_task_comm` makes it).
pub struct Loaded {
    pub vm: Arc<Vm>,
    pub entry: u64,
    pub rsp: u64,
    pub comm: [u8; 16],
}

impl Loaded {
    /// `comm` up to its NUL, as text.
    pub fn name(&self) -> &str {
        let n = self.comm.iter().position(|&b| b == 0).unwrap_or(16);
        core::str::from_utf8(&self.comm[..n]).unwrap_or("?")
    }
}

/// What the ELF rules allow here: segments between `USER_MIN_ADDR` and the `mmap` area; a
/// static PIE goes where `ET_EXEC` programs are linked.
fn limits() -> Limits {
    Limits { user_start: USER_MIN_ADDR, user_end: USER_MMAP_BASE, dyn_base: USER_IMAGE_BASE, ..Limits::default() }
}

fn errno(e: ExecError) -> i32 {
    e.errno()
}

fn prot_of(seg: &Segment) -> Prot {
    match (seg.flags.write, seg.flags.exec) {
        (_, true) => Prot::READ_EXEC,
        (true, false) => Prot::READ_WRITE,
        (false, false) => Prot::READ,
    }
}

/// Load the program at `path` into a fresh memory map with arguments `argv` and
/// environment `envp` — [`DEFAULT_ENV`] if `envp` is empty (`spawn`, init's programs pass
/// none). `path` is a ramdisk path (`/bin/hello`) or a file on `/var`. Errors: `ENOENT`,
/// `EACCES` (a directory), `ENOEXEC` (not a static x86_64 executable), `EINVAL` (its
/// segments break the address-space rules), `E2BIG` (arguments over 128 KiB), `ENOMEM`,
/// `ENODEV`/`EIO` (the disk), `ENAMETOOLONG`.
pub fn load(path: &str, argv: &[&[u8]], envp: &[&[u8]]) -> Result<Loaded, i32> {
    load_exact(path, argv, if envp.is_empty() { DEFAULT_ENV } else { envp })
}

/// [`load`] with exactly the environment `envp`, empty included (what `execve` with an
/// empty `envp` asks for on Linux).
pub fn load_exact(path: &str, argv: &[&[u8]], envp: &[&[u8]]) -> Result<Loaded, i32> {
    if var_path::is_under_var(path.as_bytes()) {
        load_var(path, argv, envp)
    } else {
        load_ram(path, argv, envp)
    }
}

/// The initial stack for `plan` (pure computation: it fails on oversized arguments before
/// any page is allocated).
fn stack_image(path: &str, argv: &[&[u8]], envp: &[&[u8]], plan: &ElfPlan) -> Result<Vec<u8>, i32> {
    let ids = super::with(|p| p.identity(sched::current())).unwrap_or_default();
    let mut random = [0u8; 16];
    crate::base::random::fill(&mut random);
    let info = StartInfo {
        uid: ids.uid,
        euid: ids.uid,
        gid: ids.gid,
        egid: ids.gid,
        hwcap: u64::from(hal::cpu::cpuid1().1),
        random,
        execfn: path.as_bytes(),
    };
    let image = tally_loader::initial_stack(USER_STACK_TOP, argv, envp, plan, &info).map_err(errno)?;
    debug_assert_eq!(image.stack_top(), USER_STACK_TOP);
    Ok(image.bytes)
}

/// Give `vm` its stack and check that it starts where the image was built for.
fn finish(path: &str, vm: Arc<Vm>, plan: &ElfPlan, stack: &[u8]) -> Result<Loaded, i32> {
    let rsp = vm.setup_stack(stack)?;
    if rsp != USER_STACK_TOP - stack.len() as u64 {
        // The two computations of the stack pointer must agree, or argv's pointers are off.
        log::error!("load {path}: stack image of {} bytes placed at {rsp:#x}", stack.len());
        return Err(EINVAL);
    }
    let name = path.rsplit('/').next().unwrap_or(path).as_bytes();
    let mut comm = [0u8; 16];
    let n = name.len().min(15);
    comm[..n].copy_from_slice(&name[..n]);
    Ok(Loaded { vm, entry: plan.entry, rsp, comm })
}

/// A ramdisk program: every segment copied into fresh pages now.
fn load_ram(path: &str, argv: &[&[u8]], envp: &[&[u8]]) -> Result<Loaded, i32> {
    let file = ramdisk::find(path).map_err(errno)?;
    let plan = elf::plan(file, &limits()).map_err(|e| {
        log::debug!("load {path}: {e}");
        errno(e)
    })?;
    let stack = stack_image(path, argv, envp, &plan)?;
    let vm = Vm::new()?;
    for seg in &plan.segments {
        vm.load_segment(seg.vaddr, seg.data(file), seg.memsz, prot_of(seg))?;
    }
    finish(path, vm, &plan, &stack)
}

/// A program on `/var`: its headers read now (the caller sleeps UNINTERRUPTIBLE, as for a
/// `read`), each segment a file-backed region paged in on demand (`vm_file.rs`).
fn load_var(path: &str, argv: &[&[u8]], envp: &[&[u8]]) -> Result<Loaded, i32> {
    let vpath = var_path::parse(path.as_bytes()).map_err(|e| e.errno())?;
    let file = Arc::new(VarFile::open(vpath, tally_uapi::fs::O_RDONLY)?);
    if file.dir {
        return Err(EACCES); // Linux's execve of a directory
    }
    let len = file.stat()?.st_size as u64;
    let mut head = file.read_at(0, elf::HEADERS_MAX.min(len as usize), SleepKind::Uninterruptible)?;
    if let Some(need) = elf::headers_len(&head).filter(|&n| n > head.len() && n as u64 <= len) {
        head = file.read_at(0, need, SleepKind::Uninterruptible)?;
    }
    let plan = elf::plan_headers(&head, len, &limits()).map_err(|e| {
        log::debug!("load {path}: {e}");
        errno(e)
    })?;
    drop(head);
    let stack = stack_image(path, argv, envp, &plan)?;
    let vm = Vm::new()?;
    for seg in &plan.segments {
        vm.map_file(Arc::new(FileSegment::new(Arc::clone(&file), *seg)), prot_of(seg))?;
    }
    finish(path, vm, &plan, &stack)
}

/// `spawn(path, argv)`: start the program `path` (ramdisk or `/var`) as a child process of
/// the caller, with [`DEFAULT_ENV`]; returns its pid. Errors: those of [`load`].
pub fn spawn_program(path: &str, argv: &[&[u8]]) -> Result<i32, i32> {
    spawn_program_vm(path, argv).map(|(pid, _)| pid)
}

/// [`spawn_program`] with `spawn`'s attributes: the child is put in its process group (and
/// that group made the console's foreground group) before it runs ([`SpawnAttr`]).
pub fn spawn_program_in(path: &str, argv: &[&[u8]], attr: SpawnAttr) -> Result<i32, i32> {
    let l = load(path, argv, &[])?;
    let params = sched::inherited_params();
    start_user_task(
        l.name(),
        params,
        Arc::clone(&l.vm),
        UserStart::at(l.entry, l.rsp, 0),
        (CreateKind::Process, attr),
        true,
    )
}

/// [`spawn_program`], also handing back the child's memory map: the self-tests read and
/// write their fixtures' result area through it (`tally_uapi::fixture`).
pub fn spawn_program_vm(path: &str, argv: &[&[u8]]) -> Result<(i32, Arc<Vm>), i32> {
    let l = load(path, argv, &[])?;
    let params = sched::inherited_params();
    let kind = (CreateKind::Process, SpawnAttr::NONE);
    let pid = start_user_task(l.name(), params, Arc::clone(&l.vm), UserStart::at(l.entry, l.rsp, 0), kind, true)?;
    Ok((pid, l.vm))
}

/// Exec in place: the calling kernel thread becomes the program `path` with arguments
/// `argv` (see the module documentation). Returns only on failure, with the caller
/// unchanged: the errors of [`load`], or `EINVAL` for a caller that is not a kernel thread
/// alone in its process. `argv` is taken by value and freed before the jump to ring 3,
/// which abandons the caller's stack.
pub fn exec_program(path: &'static str, argv: Vec<&[u8]>) -> Result<core::convert::Infallible, i32> {
    let l = load(path, &argv, &[])?;
    drop(argv);
    let name = path.rsplit('/').next().unwrap_or(path);
    exec_current(name, l.vm, UserStart::at(l.entry, l.rsp, 0))
}

/// `execve(path, argv, envp)` for the running user process, its arguments already copied
/// from user memory (the system call does that, with Linux's limits): load the program into
/// a fresh map ([`load_exact`]: the environment exactly as given, as Linux passes it; every
/// failure — `ENOENT`, `ENOEXEC`, `E2BIG`, `ENOMEM`... — leaves the caller untouched), stop
/// the process's other threads (Linux's `de_thread`), then replace the caller's program
/// (`user.rs`'s `exec_replace`: the map, the name, AFORK, the close-on-exec descriptors,
/// handled signals). Returns where the new program starts, (entry, stack pointer): the
/// system call makes that its return frame. `EINVAL` for a caller without a user mode;
/// `EACCES` for a directory; `EINTR` if the process is killed while its threads stop.
pub fn execve(path: &str, argv: &[&[u8]], envp: &[&[u8]]) -> Result<(u64, u64), i32> {
    if super::current_vm().is_none() {
        return Err(tally_uapi::errno::EINVAL);
    }
    // A directory of the ramdisk is `EACCES` to execve, as on Linux (`spawn` keeps its
    // `ENOENT`); `/var`'s loader answers for its own.
    let l = load_exact(path, argv, envp).map_err(|e| match ramdisk::lookup(path) {
        Some(tally_loader::cpio::Node::Dir) => tally_uapi::errno::EACCES,
        _ => e,
    })?;
    super::threads::stop_other_threads()?;
    let (entry, rsp) = (l.entry, l.rsp);
    let name = l.name();
    exec_replace(name, Arc::clone(&l.vm), UserStart::at(entry, rsp, 0))?;
    Ok((entry, rsp))
}
