//! Unit tests of the framing reader.
use super::*;

use crate::tier;

type Scanned = (Vec<(u64, Vec<u8>)>, Vec<Skip>, ScanEnd);

fn collect(data: &[u8], base: u64) -> Scanned {
    let mut recs = Vec::new();
    let mut skips = Vec::new();
    let end = scan(data, base, |f| match f {
        Frame::Record { offset, payload } => recs.push((offset, payload.into_owned())),
        Frame::Skip(s) => skips.push(s),
    })
    .expect("header");
    (recs, skips, end)
}

/// One incremental call: what it handed on.
fn feed(s: &mut Scanner, data: &[u8]) -> Scanned {
    let mut recs = Vec::new();
    let mut skips = Vec::new();
    let end = s
        .scan(data, |f| match f {
            Frame::Record { offset, payload } => recs.push((offset, payload.into_owned())),
            Frame::Skip(s) => skips.push(s),
        })
        .expect("header");
    (recs, skips, end)
}

/// `data` fed in pieces cut at `cuts`, then finished: records and skips.
fn in_pieces(data: &[u8], cuts: &[usize]) -> (Vec<(u64, Vec<u8>)>, Vec<Skip>) {
    let mut s = Scanner::new();
    let (mut recs, mut skips) = (Vec::new(), Vec::new());
    let mut buf = Vec::new();
    let mut from = 0;
    for &c in cuts.iter().chain(&[data.len()]) {
        buf.extend_from_slice(&data[from..c]);
        from = c;
        let (r, k, end) = feed(&mut s, &buf);
        recs.extend(r);
        skips.extend(k);
        buf.drain(..end.consumed);
    }
    s.finish(|f| {
        if let Frame::Skip(k) = f {
            skips.push(k);
        }
    });
    (recs, skips)
}

#[test]
fn a_chunk_too_long_for_its_block_is_the_same_damage_at_every_cut() {
    // The first chunk claims 65535 bytes: damage known from its header alone. The
    // search for the next chunk finds record 1 right after it, so only record 0
    // is lost, however the bytes arrive.
    let (mut data, payloads) = sample(&[40, 30, 40_000, 50, 60]);
    data[7 + 4..7 + 6].copy_from_slice(&u16::MAX.to_le_bytes());
    let (recs, skips, _) = collect(&data, 0);
    assert_eq!(
        skips,
        [Skip {
            offset: 7,
            len: 7 + 40,
            reason: SkipReason::ChunkTooLong,
        }]
    );
    let got: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
    assert_eq!(got, payloads[1..].iter().collect::<Vec<_>>());
    for cut in tier::positions(data.len()) {
        assert_eq!(
            in_pieces(&data, &[cut]),
            (recs.clone(), skips.clone()),
            "cut {cut}"
        );
    }
}

#[test]
fn a_span_never_reaches_past_the_input() {
    // A bad chunk in a 114-byte file is 107 bytes of damage, not the rest of a block.
    let (mut data, _) = sample(&[100]);
    data[7 + 7 + 5] ^= 0xFF;
    assert_eq!(data.len(), 114);
    let (recs, skips, end) = collect(&data, 0);
    assert!(recs.is_empty());
    assert_eq!(
        skips,
        [Skip {
            offset: 7,
            len: 107,
            reason: SkipReason::Checksum,
        }]
    );
    assert_eq!(end.pending, 0);
    // Held open while the file may grow, never past the input, and grown with it:
    // bytes that may still turn out a chunk wait for the rest.
    let mut s = Scanner::new();
    let (_, k, _) = feed(&mut s, &data);
    assert!(k.is_empty());
    let open = s.open_skip().expect("open span");
    assert_eq!(open.offset, 7);
    assert!(open.end() <= 114, "{open:?}");
    let mut more = data.clone();
    more.extend_from_slice(&[0u8; 50]);
    let from = usize::try_from(s.base()).unwrap_or(0);
    let (_, k, _) = feed(&mut s, &more[from..]);
    assert!(k.is_empty());
    let grown = s.open_skip().expect("open span");
    assert!(grown.end() >= open.end() && grown.end() <= 164, "{grown:?}");
    let (_, skips, _) = collect(&more, 0);
    assert_eq!(skips[0].len, 157);
}

fn sample(sizes: &[usize]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut w = Writer::new();
    let mut payloads = Vec::new();
    for (i, &n) in sizes.iter().enumerate() {
        let p: Vec<u8> = (0..n).map(|j| (i * 31 + j) as u8).collect();
        w.append(&p);
        payloads.push(p);
    }
    (w.into_bytes(), payloads)
}

#[test]
fn an_intact_chunk_of_unknown_type_costs_only_itself() {
    let (mut data, payloads) = sample(&[40, 30, 50]);
    // The second record's chunk: give it type 5 and a checksum that holds.
    let at = FILE_HEADER.len() + CHUNK_HEADER_LEN + 40;
    data[at + 6] = 5;
    let crc = crc32fast::hash(&data[at + 6..at + CHUNK_HEADER_LEN + 30]);
    data[at..at + 4].copy_from_slice(&crc.to_le_bytes());
    let (recs, skips, _) = collect(&data, 0);
    let got: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
    assert_eq!(got, [&payloads[0], &payloads[2]]);
    assert_eq!(
        skips,
        [Skip {
            offset: at as u64,
            len: (CHUNK_HEADER_LEN + 30) as u64,
            reason: SkipReason::BadChunkType,
        }]
    );
}

#[test]
fn header_checks() {
    assert_eq!(check_header(&FILE_HEADER), Ok(()));
    assert_eq!(check_header(&FILE_HEADER[..3]), Err(HeaderError::TooShort));
    assert_eq!(check_header(b""), Err(HeaderError::TooShort));
    assert_eq!(check_header(b":W&X"), Err(HeaderError::NotWandb));
    assert_eq!(check_header(b"gar"), Err(HeaderError::NotWandb));
    assert_eq!(check_header(b"garbage!"), Err(HeaderError::NotWandb));
    assert_eq!(check_header(b":W&B\xE1"), Err(HeaderError::TooShort));
    assert_eq!(check_header(b":W&B\xE2"), Err(HeaderError::BadMagic));
    assert_eq!(
        check_header(b":W&B\xE1\xBE\x01"),
        Err(HeaderError::Version(1))
    );
    assert!(scan(b"garbage!", 0, |_| {}).is_err());
}

#[test]
fn round_trip_across_blocks_and_exact_fits() {
    // 32754 fills block 0 exactly (7 header + 7 chunk header); a record that leaves
    // exactly 7 bytes forces a zero-length FIRST; big records span several blocks.
    let sizes = [32_754, 10, 32_740, 0, 100_000, 5, 32_761, 3];
    let (data, payloads) = sample(&sizes);
    let (recs, skips, end) = collect(&data, 0);
    assert!(skips.is_empty(), "{skips:?}");
    assert_eq!(
        end,
        ScanEnd {
            consumed: data.len(),
            pending: 0
        }
    );
    let got: Vec<Vec<u8>> = recs.into_iter().map(|r| r.1).collect();
    assert_eq!(got, payloads);
}

#[test]
fn exactly_seven_bytes_left_gives_empty_first() {
    let mut w = Writer::new();
    w.append(&vec![1u8; BLOCK_SIZE - 7 - 7 - 7]); // leaves 7 bytes in block 0
    w.append(b"hello");
    let d = w.into_bytes();
    assert_eq!(d[BLOCK_SIZE - 1], FIRST);
    assert_eq!(&d[BLOCK_SIZE - 3..BLOCK_SIZE - 1], &[0, 0]);
    let (recs, skips, _) = collect(&d, 0);
    assert!(skips.is_empty());
    assert_eq!(recs[1].1, b"hello");
    assert_eq!(recs[1].0, (BLOCK_SIZE - 7) as u64);
}

#[test]
fn every_cut_yields_the_complete_prefix() {
    let (data, payloads) = sample(&[40, 32_700, 9, 70_000, 0, 12]);
    let mut ends = Vec::new();
    let mut w = Writer::new();
    for p in &payloads {
        w.append(p);
        ends.push(w.bytes().len());
    }
    for cut in tier::positions(data.len()) {
        let (recs, skips, end) = collect(&data[..cut], 0);
        assert!(skips.is_empty(), "cut {cut}: {skips:?}");
        let want = ends.iter().filter(|&&e| e <= cut).count();
        assert_eq!(recs.len(), want, "cut {cut}");
        assert_eq!(end.consumed + end.pending, cut);
    }
}

#[test]
fn resume_after_partial_scan() {
    let (data, payloads) = sample(&[100, 50_000, 7, 33_000, 1]);
    let mut scanner = Scanner::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut got = Vec::new();
    for piece in data.chunks(997) {
        buf.extend_from_slice(piece);
        let (recs, skips, end) = feed(&mut scanner, &buf);
        assert!(skips.is_empty());
        got.extend(recs.into_iter().map(|r| r.1));
        buf.drain(..end.consumed);
    }
    assert_eq!(got, payloads);
    assert!(buf.is_empty());
}

#[test]
fn a_bad_checksum_costs_only_its_record() {
    let (mut data, payloads) = sample(&[10, 20, 30, 40_000, 50]);
    data[7 + 7 + 10 + 7 + 3] ^= 0xFF; // inside record 1's payload
    let (recs, skips, _) = collect(&data, 0);
    assert_eq!(
        skips,
        [Skip {
            offset: 7 + 7 + 10,
            len: 7 + 20,
            reason: SkipReason::Checksum,
        }]
    );
    // The next chunk is found right after the bad one: records 2, 3 (across
    // blocks) and 4 survive.
    let got: Vec<&Vec<u8>> = recs.iter().map(|r| &r.1).collect();
    assert_eq!(
        got,
        [&payloads[0], &payloads[2], &payloads[3], &payloads[4]]
    );
}

#[test]
fn garbage_and_zeros_are_skipped_and_counted() {
    let (mut data, payloads) = sample(&[5000, 30_000, 30_000, 30_000, 10]);
    for b in &mut data[BLOCK_SIZE..BLOCK_SIZE + 100] {
        *b = 0;
    }
    let (recs, skips, _) = collect(&data, 0);
    assert!(!skips.is_empty());
    assert!(recs.iter().any(|r| r.1 == payloads[4]));
    assert!(recs.iter().any(|r| r.1 == payloads[0]));
}

#[test]
fn a_never_ending_chunk_chain_does_not_hold_the_input() {
    // FIRST + MIDDLE chunks past the cap, no LAST: once over the cap the scan
    // reports the span and consumes it, instead of keeping it for a resume.
    let mut w = Writer::new();
    w.append(&vec![1u8; MAX_RECORD_LEN * 2]);
    let bytes = w.into_bytes();
    let cut = &bytes[..bytes.len() - 100]; // no LAST
    let (recs, skips, end) = collect(cut, 0);
    assert!(recs.is_empty());
    assert_eq!(skips[0].reason, SkipReason::RecordTooLarge);
    assert!(end.pending < BLOCK_SIZE, "kept {} bytes", end.pending);
}

#[test]
fn record_cap_bounds_memory() {
    let mut w = Writer::new();
    w.append(&vec![7u8; MAX_RECORD_LEN + 10]);
    w.append(b"after");
    let (recs, skips, _) = collect(w.bytes(), 0);
    assert_eq!(recs.len(), 1);
    assert_eq!(recs[0].1, b"after");
    assert_eq!(skips[0].reason, SkipReason::RecordTooLarge);
}

#[test]
fn garbage_after_the_last_record_of_a_complete_file_is_damage_not_a_cut_record() {
    // A header whose type the format does not have (0x63, and 0), its length within
    // the block but past the end: no writer makes it, so at the end of a complete
    // file it is damage; a scan that may get more bytes still waits, as for any
    // header whose payload is not all there yet.
    for kind in [0x63u8, 0, 0xff] {
        let (mut data, payloads) = sample(&[40, 30, 50]);
        let at = data.len();
        data.extend_from_slice(&[1, 2, 3, 4, 0x40, 0x1f, kind]);
        data.extend_from_slice(&[b'A'; 100]);
        let (recs, skips, end) = collect(&data, 0);
        let got: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
        assert_eq!(got, payloads.iter().collect::<Vec<_>>(), "type {kind:#x}");
        assert_eq!(
            skips,
            [Skip {
                offset: at as u64,
                len: 107,
                reason: SkipReason::BadChunkType,
            }],
            "type {kind:#x}"
        );
        assert_eq!(end.pending, 0, "type {kind:#x}");
        let (recs, skips, end) = feed(&mut Scanner::new(), &data);
        assert_eq!(recs.len(), 3);
        assert!(skips.is_empty(), "type {kind:#x}: {skips:?}");
        assert_eq!(end.pending, 107, "type {kind:#x}");
    }
    // A type the format has is a record cut off at the end, as before.
    let (mut data, _) = sample(&[40, 30, 50]);
    data.extend_from_slice(&[1, 2, 3, 4, 0x40, 0x1f, 1]);
    data.extend_from_slice(&[b'A'; 100]);
    let (recs, skips, end) = collect(&data, 0);
    assert_eq!((recs.len(), skips.len(), end.pending), (3, 0, 107));
}

/// A file of history records numbered `nums`, in that order, each logging its
/// number as `_step`.
fn numbered(nums: &[i64]) -> (Vec<u8>, Vec<Vec<u8>>) {
    let mut w = writer::Writer::new();
    let payloads: Vec<Vec<u8>> = nums
        .iter()
        .map(|&n| crate::synth::history_record(n, &[("_step", &n.to_string())]))
        .collect();
    for p in &payloads {
        w.append(p);
    }
    (w.into_bytes(), payloads)
}

#[test]
fn records_out_of_order_are_each_read_once() {
    // Two swapped, counting down, and a jump ahead: no number read twice, so
    // nothing is dropped (every record below the highest number read was taken
    // as read before).
    for nums in [
        vec![1, 2, 4, 3, 5],
        vec![5, 4, 3, 2, 1],
        vec![1, 2, 90, 3, 4, 5],
    ] {
        let (data, payloads) = numbered(&nums);
        let (recs, skips, _) = collect(&data, 0);
        assert_eq!(skips, [], "{nums:?}");
        assert_eq!(
            recs.iter().map(|r| &r.1).collect::<Vec<_>>(),
            payloads.iter().collect::<Vec<_>>(),
            "{nums:?}"
        );
    }
    // A record read twice still is: the second copy is a duplicate.
    let (data, payloads) = numbered(&[1, 2, 3, 2, 4]);
    let (recs, skips, _) = collect(&data, 0);
    assert_eq!(recs.len(), 4);
    assert_eq!(recs[3].1, payloads[4]);
    assert_eq!(skips.len(), 1);
    assert_eq!(skips[0].reason, SkipReason::Duplicate);
}

#[test]
fn garbage_under_a_good_checksum_takes_no_record_number() {
    // Its bytes start as record 150 would (`08 96 01`) and then are no record:
    // the records after it, numbered below 150, and the real 150 are all read.
    let mut nums: Vec<i64> = (1..=20).collect();
    nums.push(150);
    let (_, payloads) = numbered(&nums);
    let mut w = writer::Writer::new();
    for p in &payloads[..5] {
        w.append(p);
    }
    w.append(&[0x08, 0x96, 0x01, 0x01, 0xFF, 0xFF, 0x42]);
    for p in &payloads[5..] {
        w.append(p);
    }
    let (recs, skips, _) = collect(w.bytes(), 0);
    assert_eq!(skips, []);
    let read: Vec<&Vec<u8>> = recs.iter().map(|r| &r.1).collect();
    assert_eq!(read.len(), payloads.len() + 1);
    assert!(payloads.iter().all(|p| read.contains(&p)));
}

#[test]
fn a_block_trailer_inside_a_record_is_skipped() {
    // A FIRST chunk ending 1 to 6 bytes before its block's end, zeros there, the
    // LAST chunk at the next block: LevelDB's reader skips the trailer inside a
    // record as between records.
    for gap in 1..CHUNK_HEADER_LEN {
        let first: Vec<u8> =
            crate::synth::history_record(1, &[("_step", "1"), ("pad", &"7".repeat(40_000))]);
        let mut data = FILE_HEADER.to_vec();
        let first_len = BLOCK_SIZE - FILE_HEADER.len() - CHUNK_HEADER_LEN - gap;
        let chunk = |kind: u8, body: &[u8]| {
            let mut c = Vec::new();
            let mut h = crc32fast::Hasher::new();
            h.update(&[kind]);
            h.update(body);
            c.extend_from_slice(&h.finalize().to_le_bytes());
            c.extend_from_slice(&u16::try_from(body.len()).expect("fits").to_le_bytes());
            c.push(kind);
            c.extend_from_slice(body);
            c
        };
        data.extend(chunk(FIRST, &first[..first_len]));
        data.extend(std::iter::repeat_n(0, gap));
        assert_eq!(data.len(), BLOCK_SIZE);
        data.extend(chunk(LAST, &first[first_len..]));
        let (recs, skips, _) = collect(&data, 0);
        assert_eq!(skips, [], "gap {gap}");
        assert_eq!(recs.len(), 1, "gap {gap}");
        assert_eq!(recs[0].1, first, "gap {gap}");
    }
}

#[test]
fn a_zeroed_header_is_damage_and_the_records_after_it_are_read() {
    let (mut data, payloads) = sample(&[10, 20, 30]);
    data[..FILE_HEADER.len() + CHUNK_HEADER_LEN + 10].fill(0);
    assert_eq!(check_header(&data), Ok(()));
    let (recs, skips, _) = collect(&data, 0);
    assert_eq!(
        skips,
        [Skip {
            offset: 0,
            len: (FILE_HEADER.len() + CHUNK_HEADER_LEN + 10) as u64,
            reason: SkipReason::ZeroFilled,
        }]
    );
    let read: Vec<&Vec<u8>> = recs.iter().map(|r| &r.1).collect();
    assert_eq!(read, [&payloads[1], &payloads[2]]);
    // Other bytes there are another kind of file, as before.
    assert_eq!(
        check_header(b"\0\0\0\0\0\0\x01"),
        Err(HeaderError::NotWandb)
    );
}

#[test]
fn a_header_running_past_a_followed_file_s_end_before_whole_chunks_is_damage_now() {
    // A damaged header (type FULL, 30,000 bytes long) with whole records after
    // it, in a file still being written: those records are read now, not held
    // back waiting for 30,000 bytes that will never come.
    let (data, payloads) = sample(&[10, 20, 30]);
    let at = FILE_HEADER.len() + CHUNK_HEADER_LEN + 10;
    let mut damaged = data[..at].to_vec();
    damaged.extend_from_slice(&[0xAA, 0xBB, 0xCC, 0xDD]);
    damaged.extend_from_slice(&30_000u16.to_le_bytes());
    damaged.push(FULL);
    damaged.extend_from_slice(&data[at..]);
    let mut s = Scanner::new();
    let (recs, skips, _) = feed(&mut s, &damaged);
    let read: Vec<&Vec<u8>> = recs.iter().map(|r| &r.1).collect();
    assert_eq!(read, [&payloads[0], &payloads[1], &payloads[2]]);
    assert_eq!(
        skips,
        [Skip {
            offset: at as u64,
            len: CHUNK_HEADER_LEN as u64,
            reason: SkipReason::Checksum,
        }]
    );
    // A chunk not whole yet at the end, with nothing after it, is waited for.
    let mut s = Scanner::new();
    let cut = data.len() - 5;
    let (recs, skips, end) = feed(&mut s, &data[..cut]);
    assert_eq!(recs.len(), 2);
    assert_eq!(skips, []);
    assert!(end.pending > 0);
}

/// Two run files joined into one (`cat a.wandb b.wandb`): the first file's
/// records, then one span from the second file's header to the end, named as
/// another file appended — none of its records taken for the first run's, at
/// every cut of the input, and in pieces as the file grows. A copy of the file's
/// own start joined on is not another file: its records are read twice, as
/// duplicates.
#[test]
fn a_run_file_appended_to_another_is_one_span_from_its_header_on() {
    for (first_nums, second_nums) in [
        // Numbered on past the first (another run, longer): none read.
        (
            (1..=40).collect::<Vec<i64>>(),
            (1..=90).collect::<Vec<i64>>(),
        ),
        // A long record across blocks in each.
        ((1..=300).collect(), (1..=10).collect()),
    ] {
        let (a, a_payloads) = numbered(&first_nums);
        // Another run's: the same numbers, other bytes.
        let mut w = writer::Writer::new();
        for &n in &second_nums {
            w.append(&crate::synth::history_record(n, &[("_step", "7")]));
        }
        let b = w.into_bytes();
        let mut data = a.clone();
        data.extend_from_slice(&b);
        let want_span = Skip {
            offset: a.len() as u64,
            len: b.len() as u64,
            reason: SkipReason::AppendedFile,
        };
        let (recs, skips, _) = collect(&data, 0);
        let payloads: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
        assert_eq!(payloads, a_payloads.iter().collect::<Vec<_>>());
        assert_eq!(skips, [want_span]);
        // However the bytes arrive.
        for step in [1, 7, 100, 4093, BLOCK_SIZE - 3] {
            let cuts: Vec<usize> = (step..data.len()).step_by(step).collect();
            let (r, k) = in_pieces(&data, &cuts);
            assert_eq!(r.len(), a_payloads.len(), "pieces of {step}");
            assert_eq!(k, [want_span], "pieces of {step}");
        }
        // Damage before the header: its own span, then the appended one.
        let mut cut = a[..a.len() - 5].to_vec();
        cut.extend_from_slice(&b);
        let (recs, skips, _) = collect(&cut, 0);
        assert_eq!(recs.len(), a_payloads.len() - 1);
        assert_eq!(skips.len(), 2, "{skips:?}");
        assert_ne!(skips[0].reason, SkipReason::AppendedFile);
        assert_eq!(skips[0].end(), skips[1].offset);
        assert_eq!(
            skips[1],
            Skip {
                offset: cut.len() as u64 - b.len() as u64,
                len: b.len() as u64,
                reason: SkipReason::AppendedFile,
            }
        );
        // The file joined to itself: its second half is duplicates.
        let mut twice = a.clone();
        twice.extend_from_slice(&a);
        let (recs, skips, _) = collect(&twice, 0);
        assert_eq!(recs.len(), a_payloads.len());
        assert!(
            skips.iter().all(|k| k.reason != SkipReason::AppendedFile),
            "{skips:?}"
        );
        assert!(
            skips.iter().any(|k| k.reason == SkipReason::Duplicate),
            "{skips:?}"
        );
    }
}

/// Another run file joined on whose header, or first records, are damaged or
/// cut away: its records still come under numbers already read, with other
/// bytes — another writer's. From the first such record the rest is the
/// joined file's (its records read twice just before it with it), at every cut
/// of the input. A sampled number is known by its bytes: the run before it
/// must reach one.
#[test]
fn a_joined_file_without_its_header_is_told_by_its_records() {
    let (a, a_payloads) = numbered(&(1..=2_500).collect::<Vec<i64>>());
    let mut w = writer::Writer::new();
    for n in 1..=5_000_i64 {
        w.append(&crate::synth::history_record(n, &[("_step", "7")]));
    }
    let b = w.into_bytes();
    // Without its header; from a third of the way in.
    for tail in [&b[FILE_HEADER.len()..], &b[b.len() / 3..]] {
        let mut data = a.clone();
        data.extend_from_slice(tail);
        let check = |recs: &[(u64, Vec<u8>)], skips: &[Skip], what: &str| {
            let payloads: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
            assert_eq!(payloads, a_payloads.iter().collect::<Vec<_>>(), "{what}");
            let last = skips.last().expect("a span");
            assert_eq!(last.reason, SkipReason::AppendedFile, "{what}: {skips:?}");
            assert_eq!(last.end(), data.len() as u64, "{what}");
            assert!(last.offset >= a.len() as u64, "{what}: {skips:?}");
            assert!(
                skips.iter().all(|s| s.reason != SkipReason::Duplicate),
                "{what}: {skips:?}"
            );
        };
        let (recs, skips, _) = collect(&data, 0);
        check(&recs, &skips, "whole");
        for step in [7, 100, 4093] {
            let cuts: Vec<usize> = (step..data.len()).step_by(step).collect();
            let (r, k) = in_pieces(&data, &cuts);
            check(&r, &k, &format!("pieces of {step}"));
        }
    }
}

/// A piece of another run file joined on past the run's exit record, starting
/// at numbers this run never reached (no header, no number read twice): the
/// writer writes nothing of its run after its exit record, so its first record
/// of the run's data numbered past it begins another file (its console and
/// summary records before its first history row too). A record that only
/// closes a file (`final`) does not, nor one of the run's own numbered below
/// the exit (blocks moved); at every cut of the input.
#[test]
fn run_data_after_the_exit_record_is_another_files() {
    use prost::Message as _;
    let rec = |num: i64, t: crate::pb::record::RecordType| {
        crate::pb::Record {
            num,
            record_type: Some(t),
            ..Default::default()
        }
        .encode_to_vec()
    };
    let exit = |num| {
        rec(
            num,
            crate::pb::record::RecordType::Exit(crate::pb::RunExitRecord {
                exit_code: 1,
                ..Default::default()
            }),
        )
    };
    let mut w = writer::Writer::new();
    let mut mine = Vec::new();
    // Row 40 comes after the exit (blocks moved).
    for n in (1..=50_i64).filter(|&n| n != 40) {
        let p = crate::synth::history_record(n, &[("_step", &n.to_string())]);
        w.append(&p);
        mine.push(p);
    }
    // The exit, then (blocks moved) a row of the run's own numbered below it,
    // then a `final` record.
    for p in [
        exit(51),
        crate::synth::history_record(40, &[("_step", "40")]),
        rec(
            52,
            crate::pb::record::RecordType::Final(crate::pb::FinalRecord::default()),
        ),
    ] {
        w.append(&p);
        mine.push(p);
    }
    let a = w.into_bytes();
    // Another run's records 60 on: console lines and summary changes, then
    // history rows, then its own exit record.
    let mut w = writer::Writer::new();
    for n in 1..=80_i64 {
        let p = if n % 3 == 0 {
            rec(
                n,
                crate::pb::record::RecordType::OutputRaw(crate::pb::OutputRawRecord {
                    line: "theirs\n".into(),
                    ..Default::default()
                }),
            )
        } else {
            crate::synth::history_record(n, &[("_step", "3")])
        };
        w.append(&p);
    }
    w.append(&exit(81));
    let b = w.into_bytes();
    let from = b.len() * 3 / 4;
    let mut data = a.clone();
    data.extend_from_slice(&b[from..]);
    let check = |recs: &[(u64, Vec<u8>)], skips: &[Skip], what: &str| {
        let payloads: Vec<&Vec<u8>> = recs.iter().map(|(_, p)| p).collect();
        assert_eq!(payloads, mine.iter().collect::<Vec<_>>(), "{what}");
        let last = skips.last().expect("a span");
        assert_eq!(last.reason, SkipReason::AppendedFile, "{what}: {skips:?}");
        assert_eq!(last.end(), data.len() as u64, "{what}");
    };
    let (recs, skips, _) = collect(&data, 0);
    check(&recs, &skips, "whole");
    for step in [1, 33, 1000] {
        let cuts: Vec<usize> = (step..data.len()).step_by(step).collect();
        let (r, k) = in_pieces(&data, &cuts);
        check(&r, &k, &format!("pieces of {step}"));
    }
    // The run alone, its telemetry after its exit included: read whole.
    let (recs, skips, _) = collect(&a, 0);
    assert_eq!(recs.len(), mine.len());
    assert!(skips.is_empty(), "{skips:?}");
}
