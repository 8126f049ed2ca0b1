//! Fuzz-style properties: whatever bytes the ramdisk, an ELF file or a spawn request hold,
//! the parsers answer with a value or an error and never panic; when they answer with a
//! value, the value keeps every promise its documentation makes.

use proptest::prelude::*;
use tally_loader::cpio::{Archive, Builder};
use tally_loader::elf::testelf::{build, Phdr, PT_LOAD, R, W, X};
use tally_loader::elf::{plan, ElfPlan, Limits};
use tally_loader::stack::StackImage;
use tally_loader::{ExecError, PAGE_SIZE};

/// Every errno an exec error may map to (the table in `error.rs`).
fn errno_is_documented(e: ExecError) -> bool {
    use tally_uapi::errno::*;
    [ENOENT, EIO, ENOEXEC, EINVAL, E2BIG].contains(&e.errno())
}

fn check_plan(file: &[u8], limits: &Limits, p: &ElfPlan<'_>) {
    assert!(!p.segments.is_empty() && p.segments.len() <= limits.max_segments);
    let file_range = file.as_ptr_range();
    let mut pages = 0;
    for s in &p.segments {
        assert!(s.vaddr >= limits.user_start && s.vaddr + s.memsz <= limits.user_end);
        assert!(s.filesz <= s.memsz && s.memsz > 0);
        assert_eq!(s.data.len() as u64, s.filesz);
        let r = s.data.as_ptr_range();
        assert!(file_range.start <= r.start && r.end <= file_range.end, "data borrowed from the file");
        assert!(limits.allow_wx || !(s.flags.write && s.flags.exec));
        pages += s.pages();
    }
    for w in p.segments.windows(2) {
        assert!(w[0].vaddr < w[1].vaddr && w[0].page_end() <= w[1].page_start(), "sorted, no shared page");
    }
    assert_eq!(p.pages, pages);
    assert!(p.pages * PAGE_SIZE <= limits.max_image_bytes);
    assert!(p.segments.iter().any(|s| s.flags.exec && (s.vaddr..s.vaddr + s.memsz).contains(&p.entry)));
    assert_eq!(p.image_start, p.segments[0].page_start());
    assert_eq!(p.image_end, p.segments.last().unwrap().page_end());
    assert_eq!(p.image_start % PAGE_SIZE, 0);
    assert_eq!(p.image_end % PAGE_SIZE, 0);
}

/// Program headers drawn near the interesting boundaries, and sometimes anywhere.
fn phdr() -> impl Strategy<Value = Phdr> {
    let addr = prop_oneof![
        (0x40u64..0x50).prop_map(|p| p * PAGE_SIZE),
        (0x40_0000u64..0x40_4000),
        Just(0u64),
        Just((1u64 << 47) - PAGE_SIZE),
        Just(0xffff_8000_0000_0000u64),
        any::<u64>(),
    ];
    let size = prop_oneof![0u64..0x3000, Just(u64::MAX), Just(64 << 20), any::<u64>()];
    let off = prop_oneof![0u64..0x3000, any::<u64>()];
    let ty = prop_oneof![4 => Just(PT_LOAD), 1 => 0u32..8, 1 => any::<u32>()];
    let align = prop_oneof![Just(0x1000u64), Just(0), Just(1), Just(3), any::<u64>()];
    (ty, 0u32..8, off, addr, size.clone(), size, align)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    #[test]
    fn cpio_never_panics_on_random_bytes(
        data in proptest::collection::vec(any::<u8>(), 0..600),
        path in "[a-z/.]{0,12}",
    ) {
        let a = Archive::new(&data);
        for e in a.entries() {
            match e {
                Ok(e) => {
                    let r = e.data.as_ptr_range();
                    prop_assert!(data.as_ptr_range().start <= r.start && r.end <= data.as_ptr_range().end);
                }
                Err(e) => prop_assert!(errno_is_documented(e)),
            }
        }
        let _ = a.validate();
        let _ = a.find(&path);
    }

    #[test]
    fn cpio_round_trips_and_survives_damage(
        files in proptest::collection::vec(
            ("[a-z]{1,8}(/[a-z]{1,8}){0,2}", proptest::collection::vec(any::<u8>(), 0..100)),
            0..8,
        ),
        cut in any::<prop::sample::Index>(),
        flip in any::<prop::sample::Index>(),
        byte in any::<u8>(),
    ) {
        let mut b = Builder::new();
        for (name, data) in &files {
            b.file(name, data, 0o644).unwrap();
        }
        let bytes = b.finish();
        let a = Archive::new(&bytes);
        prop_assert_eq!(a.validate(), Ok(files.len()));
        for (name, _) in &files {
            // The first entry of that name wins.
            let first = &files.iter().find(|(n, _)| n == name).unwrap().1;
            prop_assert_eq!(a.find(name).unwrap().data, first.as_slice());
            let rooted = format!("/{name}");
            prop_assert_eq!(a.find(&rooted).unwrap().data, first.as_slice());
        }
        // Damage: a truncation and a changed byte give answers, not panics.
        let short = &bytes[..cut.index(bytes.len() + 1)];
        let _ = Archive::new(short).validate();
        let mut bad = bytes.clone();
        let i = flip.index(bad.len());
        bad[i] = byte;
        let a = Archive::new(&bad);
        let _ = a.validate();
        for (name, _) in &files {
            let _ = a.find(name);
        }
    }

    #[test]
    fn elf_never_panics_on_random_bytes(data in proptest::collection::vec(any::<u8>(), 0..400)) {
        let limits = Limits::default();
        if let Ok(p) = plan(&data, &limits) {
            check_plan(&data, &limits, &p);
        }
    }

    #[test]
    fn elf_with_random_headers(
        entry in prop_oneof![0x40_0000u64..0x40_4000, any::<u64>()],
        e_type in prop_oneof![Just(2u16), any::<u16>()],
        phdrs in proptest::collection::vec(phdr(), 0..6),
        size in 0usize..0x4000,
        allow_wx in any::<bool>(),
    ) {
        let f = build(e_type, entry, &phdrs, size);
        let limits = Limits { allow_wx, ..Limits::default() };
        match plan(&f, &limits) {
            Ok(p) => check_plan(&f, &limits, &p),
            Err(e) => prop_assert!(errno_is_documented(e)),
        }
    }

    #[test]
    fn elf_mutations_of_a_good_file(
        flips in proptest::collection::vec((0usize..0x200, any::<u8>()), 1..6),
        cut in 0usize..0x3001,
    ) {
        let mut f = tally_loader::elf::testelf::typical();
        for (i, b) in flips {
            f[i] = b;
        }
        f.truncate(cut);
        let limits = Limits::default();
        if let Ok(p) = plan(&f, &limits) {
            check_plan(&f, &limits, &p);
        }
    }

    #[test]
    fn stack_images_decode_back(
        argv in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..12),
        envp in proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..40), 0..4),
        aux in proptest::collection::vec((1u64..50, any::<u64>()), 0..4),
        top in prop_oneof![(0x100u64..0x8_0000_0000).prop_map(|t| t * 16), any::<u64>()],
    ) {
        let a: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let e: Vec<&[u8]> = envp.iter().map(Vec::as_slice).collect();
        match StackImage::build(top, &a, &e, &aux) {
            Err(err) => {
                prop_assert!(errno_is_documented(err));
                let has_nul = a.iter().chain(&e).any(|s| s.contains(&0));
                prop_assert!(has_nul || err == ExecError::BadStackTop || err == ExecError::ArgsTooLong);
            }
            Ok(img) => {
                prop_assert_eq!(img.rsp % 16, 0);
                prop_assert_eq!(img.stack_top(), top);
                let word = |addr: u64| {
                    let i = (addr - img.rsp) as usize;
                    u64::from_le_bytes(img.bytes[i..i + 8].try_into().unwrap())
                };
                let cstr = |addr: u64| {
                    let i = (addr - img.rsp) as usize;
                    let n = img.bytes[i..].iter().position(|&b| b == 0).unwrap();
                    img.bytes[i..i + n].to_vec()
                };
                prop_assert_eq!(word(img.rsp) as usize, a.len());
                for (i, s) in a.iter().enumerate() {
                    prop_assert_eq!(&cstr(word(img.argv + 8 * i as u64)), s);
                }
                prop_assert_eq!(word(img.argv + 8 * a.len() as u64), 0);
                for (i, s) in e.iter().enumerate() {
                    prop_assert_eq!(&cstr(word(img.envp + 8 * i as u64)), s);
                }
                let auxv = img.envp + 8 * (e.len() as u64 + 1);
                for (i, &(k, v)) in aux.iter().enumerate() {
                    prop_assert_eq!((word(auxv + 16 * i as u64), word(auxv + 16 * i as u64 + 8)), (k, v));
                }
                prop_assert_eq!(word(auxv + 16 * aux.len() as u64), 0);
            }
        }
    }
}

#[test]
fn prepare_finds_plans_and_stacks() {
    let elf = tally_loader::elf::testelf::typical();
    let mut b = Builder::new();
    b.dir("bin").unwrap();
    b.file("bin/prog", &elf, 0o755).unwrap();
    let ramdisk = b.finish();
    let top = 0x7fff_ffff_0000;
    let p = tally_loader::prepare(&ramdisk, "/bin/prog", &[b"prog", b"x"], &[], &Limits::default(), top).unwrap();
    assert_eq!(p.file.name, "bin/prog");
    assert_eq!(p.plan.entry, 0x40_0100);
    assert_eq!(p.stack.stack_top(), top);
    assert_eq!(p.stack.argc, 2);
    // auxv: AT_PAGESZ then AT_ENTRY, right after envp's NULL.
    let w = |addr: u64| {
        let i = (addr - p.stack.rsp) as usize;
        u64::from_le_bytes(p.stack.bytes[i..i + 8].try_into().unwrap())
    };
    assert_eq!((w(p.stack.envp + 8), w(p.stack.envp + 16)), (6, 4096));
    assert_eq!((w(p.stack.envp + 24), w(p.stack.envp + 32)), (9, 0x40_0100));
    let e = tally_loader::prepare(&ramdisk, "/bin/nope", &[], &[], &Limits::default(), top).unwrap_err();
    assert_eq!(e.errno(), tally_uapi::errno::ENOENT);
    let e = tally_loader::prepare(&ramdisk, "/bin/prog", &[], &[], &Limits::default(), 0x40_2000).unwrap_err();
    assert_eq!(e, ExecError::BadStackTop, "stack below the image end");
}

#[test]
fn writable_executable_typical_segments() {
    // The three kinds of segment a real program has, with the flags it gets.
    let f = build(
        2,
        0x40_0000,
        &[(PT_LOAD, R | X, 0, 0x40_0000, 0x10, 0x10, 0x1000), (PT_LOAD, R | W, 0x1000, 0x40_1000, 0x10, 0x10, 0x1000)],
        0x2000,
    );
    assert!(plan(&f, &Limits::default()).is_ok());
}
