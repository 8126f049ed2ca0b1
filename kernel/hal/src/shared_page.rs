//! # Shared pages: kernel data that user space may read
//!
//! A [`SharedPage<T>`] owns one zeroed frame holding a `T`. The kernel reads and writes the
//! `T` through its physical-memory window, as ordinary memory (`Deref`/`DerefMut`); the
//! page can also be mapped, read-only and not executable, into user address spaces
//! ([`SharedPage::map_into`]). This is how a Linux kernel shares its *vvar* page: the
//! microstate clock of every user thread lives in such a page, so user code reads the
//! scheduler's own clock, with nothing copied out on the way back to user mode
//! (`tally_uapi::msa::vvar`, `docs/microstate-accounting.md`).
//!
//! Why this is sound:
//! * the frame belongs to the page alone (taken from the frame pool, given back on drop);
//!   the kernel reaches it only through `self`, so `&`/`&mut` follow Rust's borrow rules;
//! * user mappings are read-only: nothing but the kernel writes the frame. What user code
//!   reads — possibly in the middle of a kernel update — is no concern of the kernel's
//!   memory safety (the reader's protocol, a sequence count, makes it consistent);
//! * a user mapping never outlives the frame: the page remembers where it is mapped and
//!   unmaps itself from every address space still alive when it is dropped, before the
//!   frame goes back to the pool; an address space, for its part, never frees a shared
//!   frame it maps (`clear_user`, `unmap_range` unlink it only) and refuses to change its
//!   protection;
//! * `T: Copy` has no destructor to run and holds no borrowed data: a plain value whose
//!   bytes the owner is content to publish. It must fit in a page (checked at compile time).

use alloc::sync::{Arc, Weak};
use alloc::vec::Vec;
use core::marker::PhantomData;
use core::ops::{Deref, DerefMut};
use core::ptr::NonNull;

use super::address_space::{AddressSpace, SpaceError, PAGE_SIZE};
use super::paging;

/// A frame holding a `T`, writable by the kernel, mappable read-only into user space.
pub struct SharedPage<T: Copy> {
    phys: u64,
    ptr: FramePtr<T>,
    /// Where it is mapped: (address space, user address).
    mappings: Vec<(Weak<AddressSpace>, u64)>,
    _owns: PhantomData<T>,
}

/// The window's address of the `T` a page owns. Only this field needs its `Send`/`Sync`
/// argued; the page's other fields keep the ones the compiler derives.
struct FramePtr<T>(NonNull<T>);

// SAFETY: the pointer is the only way to the `T` in a frame its `SharedPage` owns, like a
// `Box<T>`'s: moving the page to another thread moves that ownership, so `T: Send` suffices.
unsafe impl<T: Send> Send for FramePtr<T> {}
// SAFETY: as above; through `&SharedPage<T>` only `&T` is handed out, so `T: Sync` suffices.
unsafe impl<T: Sync> Sync for FramePtr<T> {}

impl<T: Copy> SharedPage<T> {
    /// A page holding `value` (the rest of the frame zero), mapped nowhere yet.
    pub fn new(value: T) -> Result<Self, SpaceError> {
        const { assert!(core::mem::size_of::<T>() <= PAGE_SIZE as usize && core::mem::align_of::<T>() <= 4096) };
        let phys = crate::frames::with(|f| f.alloc()).ok_or(SpaceError::OutOfFrames)?;
        paging::zero_frame(phys);
        let ptr = paging::phys_to_virt(phys) as *mut T;
        // SAFETY: the frame was just taken from the pool, so nothing else refers to it; the
        // physical window maps it writable; `T` fits in it and its alignment divides the
        // frame's (checked above).
        unsafe { ptr.write(value) };
        // The window's address of a frame is never null.
        let ptr = NonNull::new(ptr).ok_or(SpaceError::OutOfFrames)?;
        Ok(SharedPage { phys, ptr: FramePtr(ptr), mappings: Vec::new(), _owns: PhantomData })
    }

    /// Map the page at user address `va` of `space`, readable by user code only (no write,
    /// no execute). `AlreadyMapped` if something is there (nothing changes then).
    pub fn map_into(&mut self, space: &Arc<AddressSpace>, va: u64) -> Result<(), SpaceError> {
        // Forget address spaces that are gone (their tables went with them), and make room
        // for the new record first: a mapping the page could not remember would outlive it.
        self.mappings.retain(|(s, _)| s.strong_count() > 0);
        self.mappings.try_reserve(1).map_err(|_| SpaceError::OutOfFrames)?;
        space.map_shared_frame(va, self.phys)?;
        self.mappings.push((Arc::downgrade(space), va));
        Ok(())
    }
}

impl<T: Copy> Deref for SharedPage<T> {
    type Target = T;
    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: `ptr` points to the `T` written in `new`, in a frame this page owns for
        // its whole life; user mappings are read-only, so only the kernel, through `self`,
        // writes it, and `&self` excludes a `&mut` for as long as the result lives.
        unsafe { self.ptr.0.as_ref() }
    }
}

impl<T: Copy> DerefMut for SharedPage<T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: as in `deref`; `&mut self` makes the reference exclusive in the kernel.
        unsafe { self.ptr.0.as_mut() }
    }
}

impl<T: Copy> Drop for SharedPage<T> {
    fn drop(&mut self) {
        for (space, va) in self.mappings.drain(..) {
            if let Some(space) = space.upgrade() {
                space.unmap_shared_frame(va, self.phys);
            }
        }
        crate::frames::with(|f| f.free(self.phys));
    }
}
