//! Fuzz-style properties: whatever bytes the ramdisk, an ELF file or a spawn request hold,
//! the parsers answer with a value or an error and never panic; when they answer with a
//! value, the value keeps every promise its documentation makes.

use proptest::prelude::*;
use tally_loader::cpio::{Archive, Builder};
use tally_loader::elf::testelf::{build, Phdr, PT_LOAD, R, W, X};
use tally_loader::elf::{headers_len, plan, plan_headers, ElfPlan, Limits};
use tally_loader::stack::{StackImage, ARG_MAX};
use tally_loader::{ExecError, PAGE_SIZE};

/// Every errno an exec error may map to (the table in `error.rs`).
fn errno_is_documented(e: ExecError) -> bool {
    use tally_uapi::errno::*;
    [ENOENT, EIO, ENOEXEC, EINVAL, E2BIG].contains(&e.errno())
}

fn check_plan(file: &[u8], limits: &Limits, p: &ElfPlan) {
    assert!(!p.segments.is_empty() && p.segments.len() <= limits.max_segments);
    let file_range = file.as_ptr_range();
    let mut pages = 0;
    for s in &p.segments {
        assert!(s.vaddr >= limits.user_start && s.vaddr + s.memsz <= limits.user_end);
        assert!(s.filesz <= s.memsz && s.memsz > 0);
        assert_eq!(s.data(file).len() as u64, s.filesz);
        let r = s.data(file).as_ptr_range();
        assert!(file_range.start <= r.start && r.end <= file_range.end, "data borrowed from the file");
        assert!(limits.allow_wx || !(s.flags.write && s.flags.exec));
        pages += s.pages();
        // Page by page, what demand paging reads: inside the page and inside the file, and
        // every file byte of the segment read exactly once.
        let mut covered = 0;
        let mut page = s.page_start();
        while page < s.page_end() {
            let (skip, off, len) = s.file_part(page);
            assert!(skip + len <= PAGE_SIZE);
            if len > 0 {
                assert!(off >= s.offset && off + len <= s.offset + s.filesz && off + len <= file.len() as u64);
                assert_eq!(page + skip - s.vaddr, off - s.offset, "file byte i lands at vaddr + i");
            }
            covered += len;
            page += PAGE_SIZE;
        }
        assert_eq!(covered, s.filesz);
    }
    assert_eq!(p.load_bias, if p.pie { limits.dyn_base } else { 0 });
    if p.phdr != 0 {
        // AT_PHDR points at mapped file bytes that are the program header table.
        let s = p.segments.iter().find(|s| s.vaddr <= p.phdr && p.phdr < s.vaddr + s.filesz).expect("phdr mapped");
        assert!(p.phdr - s.vaddr + p.phent * p.phnum <= s.filesz);
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
    // PT_LOAD mostly; then the others a static program has: PT_DYNAMIC (2), PT_INTERP (3),
    // PT_NOTE (4), PT_PHDR (6), PT_TLS (7), GNU_STACK and GNU_RELRO.
    let ty = prop_oneof![
        4 => Just(PT_LOAD),
        1 => 0u32..8,
        1 => Just(7u32),
        1 => Just(0x6474_e551u32),
        1 => Just(0x6474_e552u32),
        1 => any::<u32>()
    ];
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
        entry in prop_oneof![0x40_0000u64..0x40_4000, 0u64..0x4000, any::<u64>()],
        e_type in prop_oneof![Just(2u16), Just(3u16), any::<u16>()],
        phdrs in proptest::collection::vec(phdr(), 0..8),
        size in 0usize..0x4000,
        allow_wx in any::<bool>(),
        dyn_base in prop_oneof![Just(0x40_0000u64), (0u64..0x1_0000).prop_map(|p| p * PAGE_SIZE), any::<u64>()],
    ) {
        let f = build(e_type, entry, &phdrs, size);
        let limits = Limits { allow_wx, dyn_base, ..Limits::default() };
        let whole = plan(&f, &limits);
        match &whole {
            Ok(p) => check_plan(&f, &limits, p),
            Err(e) => prop_assert!(errno_is_documented(*e)),
        }
        // From the headers alone (a file on /var), the same answer.
        if let Some(n) = headers_len(&f) {
            let head = &f[..n.min(f.len())];
            prop_assert_eq!(plan_headers(head, f.len() as u64, &limits), whole);
        }
    }

    #[test]
    fn elf_mutations_of_a_good_file(
        flips in proptest::collection::vec((0usize..0x200, any::<u8>()), 1..6),
        cut in 0usize..0x3001,
        pie in any::<bool>(),
    ) {
        let mut f = tally_loader::elf::testelf::typical();
        if pie {
            f[16] = 3; // ET_DYN: every address gets the base
        }
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, ..ProptestConfig::default() })]

    /// Hostile sizes: thousands of empty strings, strings near `ARG_MAX`, placed items; the
    /// image either fits in `ARG_MAX` (plus alignment) and decodes back, or is `E2BIG`.
    #[test]
    fn stack_hostile_sizes(
        nargs in prop_oneof![0usize..4, 1000usize..20_000],
        arg_len in prop_oneof![0usize..4, 100usize..200, Just(ARG_MAX / 2), Just(ARG_MAX - 1), Just(ARG_MAX)],
        nenv in prop_oneof![0usize..4, 1000usize..20_000],
        env_len in prop_oneof![0usize..4, Just(ARG_MAX / 3)],
        placed in proptest::collection::vec((20u64..40, proptest::collection::vec(1u8..=255, 0..64)), 0..10),
    ) {
        let arg = vec![b'a'; arg_len];
        let env = vec![b'e'; env_len];
        let argv: Vec<&[u8]> = (0..nargs).map(|i| if i % 2 == 0 { &arg[..] } else { &b""[..] }).collect();
        let envp: Vec<&[u8]> = (0..nenv).map(|_| &env[..]).collect();
        let items: Vec<(u64, &[u8])> = placed.iter().map(|(k, v)| (*k, v.as_slice())).collect();
        let top = 0x7fff_ffff_0000;
        match StackImage::build_with(top, &argv, &envp, &[(6, 4096)], &items) {
            Err(e) => prop_assert_eq!(e, ExecError::ArgsTooLong),
            Ok(img) => {
                prop_assert!(img.bytes.len() <= ARG_MAX + 16);
                prop_assert_eq!(img.stack_top(), top);
                prop_assert_eq!(img.rsp % 16, 0);
                let aux = img.auxv();
                prop_assert_eq!(aux.len(), 1 + items.len());
                prop_assert_eq!(aux[0], (6, 4096));
                for (i, (k, v)) in items.iter().enumerate() {
                    prop_assert_eq!(aux[1 + i].0, *k);
                    prop_assert_eq!(img.bytes_at(aux[1 + i].1, v.len()), Some(*v));
                }
            }
        }
    }

    /// The Linux initial stack for any plan the fuzzer can make: every auxv entry in
    /// Linux's order, pointing where it says.
    #[test]
    fn linux_initial_stack(
        phdrs in proptest::collection::vec(phdr(), 1..6),
        e_type in prop_oneof![Just(2u16), Just(3u16)],
        entry in prop_oneof![0x40_0000u64..0x40_4000, 0u64..0x4000],
        argv in proptest::collection::vec(proptest::collection::vec(1u8..=255, 0..30), 0..6),
        execfn in proptest::collection::vec(any::<u8>(), 0..40),
        random in any::<[u8; 16]>(),
        ids in any::<(u32, u32, u32, u32)>(),
    ) {
        let f = build(e_type, entry, &phdrs, 0x3000);
        let Ok(p) = plan(&f, &Limits::default()) else { return Ok(()) };
        let a: Vec<&[u8]> = argv.iter().map(Vec::as_slice).collect();
        let info = tally_loader::StartInfo {
            uid: ids.0, euid: ids.1, gid: ids.2, egid: ids.3, hwcap: 0x178b_fbff, random, execfn: &execfn,
        };
        let top = 0x7fff_ffff_0000;
        match tally_loader::initial_stack(top, &a, tally_loader::DEFAULT_ENV, &p, &info) {
            Err(e) => prop_assert!(execfn.contains(&0) && e == ExecError::NulInArgument),
            Ok(img) => {
                use tally_uapi::auxv::*;
                let aux = img.auxv();
                let keys: Vec<u64> = aux.iter().map(|e| e.0).collect();
                prop_assert_eq!(keys, vec![
                    AT_HWCAP, AT_PAGESZ, AT_CLKTCK, AT_PHDR, AT_PHENT, AT_PHNUM, AT_BASE, AT_FLAGS, AT_ENTRY,
                    AT_UID, AT_EUID, AT_GID, AT_EGID, AT_SECURE, AT_RANDOM, AT_EXECFN, AT_PLATFORM,
                ]);
                let v = |k: u64| aux.iter().find(|e| e.0 == k).unwrap().1;
                prop_assert_eq!((v(AT_PHDR), v(AT_PHNUM), v(AT_ENTRY)), (p.phdr, p.phnum, p.entry));
                prop_assert_eq!((v(AT_UID), v(AT_EGID), v(AT_BASE), v(AT_SECURE)), (ids.0 as u64, ids.3 as u64, 0, 0));
                prop_assert_eq!(img.bytes_at(v(AT_RANDOM), 16), Some(&random[..]));
                let mut name = execfn.clone();
                name.push(0);
                prop_assert_eq!(img.bytes_at(v(AT_EXECFN), name.len()), Some(&name[..]));
                prop_assert_eq!(img.bytes_at(v(AT_PLATFORM), 7), Some(&b"x86_64\0"[..]));
                prop_assert!(img.rsp >= p.image_end);
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
