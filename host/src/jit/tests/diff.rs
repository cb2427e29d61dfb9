//! Differential tests: many small IR fixtures, each run from random
//! guest states and memory through the JIT (plain and journaled) and the
//! interpreter, which must agree on everything (see
//! [`crate::exec_tests::Prepared::check`]).
//! Random values favour the edges: small shift amounts, sign and width
//! boundaries, and for floats zeros, infinities, quiet and signalling
//! NaNs, denormals and integer-conversion limits.
//!
//! `AARCHX_DIFF_STATES` sets how many states each fixture runs (16).

use aarchx_ir::{GuestState, Reg};

use crate::exec_tests::{region, GuestMem, Prepared};

/// xorshift64*: a small deterministic generator.
pub(super) struct Rng(pub u64);

impl Rng {
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
        xs[(self.next() % xs.len() as u64) as usize]
    }

    fn int(&mut self) -> u64 {
        const EDGES: [u64; 16] = [
            0,
            1,
            2,
            0x7f,
            0x80,
            0xff,
            0x7fff,
            0x8000,
            0xffff,
            0x7fff_ffff,
            0x8000_0000,
            0xffff_ffff,
            0x7fff_ffff_ffff_ffff,
            0x8000_0000_0000_0000,
            u64::MAX,
            u64::MAX - 1,
        ];
        match self.next() % 8 {
            0 | 1 => self.next() % 70,
            2 => self.pick(&EDGES),
            3 => (self.next() % 70).wrapping_neg(),
            _ => self.next(),
        }
    }

    fn f32(&mut self) -> u32 {
        const SPECIAL: [u32; 20] = [
            0,
            0x8000_0000,
            0x3f80_0000,
            0xbf80_0000,
            0x3f00_0000,
            0x4020_0000,
            0xc020_0000,
            0x7f80_0000,
            0xff80_0000,
            0x7fc0_0000,
            0x7fc1_2345,
            0x7f80_0001,
            0xff81_2345,
            0x0000_0001,
            0x807f_ffff,
            0x7f7f_ffff,
            0x4f00_0000,
            0xcf00_0000,
            0x4eff_ffff,
            0x5f00_0000,
        ];
        match self.next() % 4 {
            0 | 1 => self.pick(&SPECIAL),
            2 => (((self.next() % 2000) as i32 - 1000) as f32 / 4.0).to_bits(),
            _ => self.next() as u32,
        }
    }

    fn f64(&mut self) -> u64 {
        const SPECIAL: [u64; 20] = [
            0,
            0x8000_0000_0000_0000,
            0x3ff0_0000_0000_0000,
            0xbff0_0000_0000_0000,
            0x3fe0_0000_0000_0000,
            0x4004_0000_0000_0000,
            0xc004_0000_0000_0000,
            0x7ff0_0000_0000_0000,
            0xfff0_0000_0000_0000,
            0x7ff8_0000_0000_0000,
            0x7ff8_0000_0001_2345,
            0x7ff0_0000_0000_0001,
            0xfff4_0000_0000_0000,
            0x0000_0000_0000_0001,
            0x800f_ffff_ffff_ffff,
            0x7fef_ffff_ffff_ffff,
            0x41df_ffff_ffc0_0000,
            0x41e0_0000_0000_0000,
            0xc1e0_0000_0000_0000,
            0x43e0_0000_0000_0000,
        ];
        match self.next() % 4 {
            0 | 1 => self.pick(&SPECIAL),
            2 => (((self.next() % 2000) as i64 - 1000) as f64 / 4.0).to_bits(),
            _ => self.next(),
        }
    }

    fn xmm(&mut self) -> u128 {
        match self.next() % 4 {
            0 => (0..4).fold(0, |acc, i| acc | u128::from(self.f32()) << (32 * i)),
            1 => u128::from(self.f64()) | u128::from(self.f64()) << 64,
            2 => (0..8).fold(0, |acc, i| acc | u128::from(self.int() as u16) << (16 * i)),
            _ => u128::from(self.next()) | u128::from(self.next()) << 64,
        }
    }

    /// A random state; rdi points into the middle of `mem`.
    pub fn state(&mut self, mem: &GuestMem) -> GuestState {
        let mut s = GuestState::default();
        for g in &mut s.gpr {
            *g = self.int();
        }
        s.gpr[Reg::RDI.0 as usize] = mem.base() + 0x400;
        for f in &mut s.flags[..7] {
            *f = if self.next() % 8 == 0 { self.next() as u8 } else { (self.next() & 1) as u8 };
        }
        for x in s.xmm.iter_mut().chain(&mut s.ymm_hi) {
            *x = self.xmm();
        }
        s.rip = 0x1000;
        s
    }
}

/// Runs every fixture from random states.
fn run_fixtures(name: &str, fixtures: &[String]) {
    let regions: Vec<_> = fixtures.iter().map(|t| region(t)).collect();
    run_regions(name, &regions);
}

/// Runs every region from random states and memory (the count from
/// `AARCHX_DIFF_STATES`, 16 by default).
pub(super) fn run_regions(name: &str, regions: &[aarchx_ir::Region]) {
    let states: usize = std::env::var("AARCHX_DIFF_STATES").ok().and_then(|s| s.parse().ok()).unwrap_or(16);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15 ^ name.len() as u64);
    let mut mem = GuestMem::new();
    for r in regions {
        let mut prepared = Prepared::new(r);
        for _ in 0..states {
            let bytes: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
            mem.set_bytes(&bytes);
            let state = rng.state(&mem);
            prepared.check(&state, &mut mem);
        }
    }
}

/// A region of one block: `body` then an exit.
fn block(body: &str) -> String {
    format!("region 0x1000\nblock0:\n{body}\n exit jump 0x2000\n")
}

const INTS: [&str; 5] = ["i1", "i8", "i16", "i32", "i64"];

/// `get REG` as a value of `ty` (truncated from 64 bits) named `name`.
fn int_operand(name: &str, reg: &str, ty: &str) -> String {
    if ty == "i64" {
        format!(" {name} = get {reg}\n")
    } else {
        format!(" {name}w = get {reg}\n {name} = trunc.{ty} {name}w\n")
    }
}

/// Sets rdx from `v` of `ty`, zero-extended.
fn set_int(v: &str, ty: &str) -> String {
    if ty == "i64" {
        format!(" set rdx, {v}\n")
    } else {
        format!(" r = zext.i64 {v}\n set rdx, r\n")
    }
}

/// Value names in fixtures are symbolic; the parser wants `vN`.
fn number(text: &str) -> String {
    let mut names: Vec<String> = Vec::new();
    let mut out = String::new();
    for line in text.lines() {
        let mut new_line = String::new();
        for (i, tok) in line.split(' ').enumerate() {
            if i > 0 {
                new_line.push(' ');
            }
            let (word, tail) = tok.strip_suffix(',').map_or((tok, ""), |w| (w, ","));
            let is_name = !word.is_empty()
                && word.chars().next().is_some_and(|c| c.is_ascii_lowercase())
                && word.chars().all(|c| c.is_ascii_alphanumeric())
                && (line.trim_start().starts_with(&format!("{word} ")) || names.iter().any(|n| n == word));
            let is_def = line.trim_start().starts_with(&format!("{word} = "));
            if is_def && !names.iter().any(|n| n == word) {
                names.push(word.to_string());
            }
            match names.iter().position(|n| n == word) {
                Some(p) if is_name || is_def => new_line.push_str(&format!("v{p}{tail}")),
                _ => new_line.push_str(tok),
            }
        }
        out.push_str(&new_line);
        out.push('\n');
    }
    out
}

fn fixture(body: &str) -> String {
    number(&block(body))
}

#[test]
fn integer_binary_ops() {
    let ops = [
        "add",
        "sub",
        "mul",
        "umulh",
        "smulh",
        "udiv",
        "sdiv",
        "urem",
        "srem",
        "and",
        "or",
        "xor",
        "and_not",
        "shl",
        "lshr",
        "ashr",
        "rotl",
        "rotr",
        "umin",
        "umax",
        "smin",
        "smax",
        "avg_u",
        "add_sat_u",
        "add_sat_s",
        "sub_sat_u",
        "sub_sat_s",
    ];
    let mut fixtures = Vec::new();
    for op in ops {
        for ty in INTS {
            fixtures.push(fixture(&format!(
                "{}{} c = {op}.{ty} a, b\n{}",
                int_operand("a", "rax", ty),
                int_operand("b", "rcx", ty),
                set_int("c", ty)
            )));
        }
    }
    // Shift amounts of other types.
    for op in ["shl", "lshr", "ashr", "rotl", "rotr"] {
        for (ty, amount) in [("i64", "i8"), ("i32", "i64"), ("i8", "i32"), ("i16", "i1")] {
            fixtures.push(fixture(&format!(
                "{}{} c = {op}.{ty} a, b\n{}",
                int_operand("a", "rax", ty),
                int_operand("b", "rcx", amount),
                set_int("c", ty)
            )));
        }
    }
    run_fixtures("integer_binary_ops", &fixtures);
}

#[test]
fn integer_unary_compare_select_convert() {
    let mut fixtures = Vec::new();
    for op in ["not", "neg", "clz", "ctz", "popcnt", "bswap", "parity"] {
        for ty in INTS {
            if op == "bswap" && ty == "i1" {
                continue;
            }
            let result = if op == "parity" { "i1" } else { ty };
            fixtures.push(fixture(&format!(
                "{} c = {op}.{ty} a\n{}",
                int_operand("a", "rax", ty),
                set_int("c", result)
            )));
        }
    }
    for cond in ["eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"] {
        for ty in INTS {
            fixtures.push(fixture(&format!(
                "{}{} c = icmp.{ty} {cond} a, b\n{}",
                int_operand("a", "rax", ty),
                int_operand("b", "rcx", ty),
                set_int("c", "i1")
            )));
        }
    }
    for ty in INTS {
        fixtures.push(fixture(&format!(
            " f = get cf\n{}{} c = select.{ty} f, a, b\n{}",
            int_operand("a", "rax", ty),
            int_operand("b", "rcx", ty),
            set_int("c", ty)
        )));
    }
    fixtures.push(fixture(" f = get zf\n a = get xmm0\n b = get xmm1\n c = select.f32x4 f, a, b\n set xmm2, c"));
    for (i, from) in INTS.iter().enumerate() {
        for to in &INTS[i + 1..] {
            for op in ["zext", "sext"] {
                fixtures.push(fixture(&format!(
                    "{} c = {op}.{to} a\n{}",
                    int_operand("a", "rax", from),
                    set_int("c", to)
                )));
            }
            fixtures.push(fixture(&format!(
                "{} c = trunc.{from} a\n{}",
                int_operand("a", "rax", to),
                set_int("c", from)
            )));
        }
    }
    for (half, whole) in [("i8", "i16"), ("i16", "i32"), ("i32", "i64")] {
        fixtures.push(fixture(&format!(
            "{}{} c = concat.{whole} a, b\n{}",
            int_operand("a", "rax", half),
            int_operand("b", "rcx", half),
            set_int("c", whole)
        )));
    }
    fixtures.push(fixture(
        " a = iconst.i64 0x123456789abcdef0\n b = iconst.i16 0xfff1\n c = zext.i64 b\n d = add.i64 a, c\n set rdx, d",
    ));
    run_fixtures("integer_unary_compare_select_convert", &fixtures);
}

#[test]
fn i128_ops() {
    let pair = |name: &str, hi: &str, lo: &str| {
        format!(" {name}h = get {hi}\n {name}l = get {lo}\n {name} = concat.i128 {name}h, {name}l\n")
    };
    let out = |v: &str| format!(" o = bitcast.v128 {v}\n set xmm2, o\n");
    let mut fixtures = Vec::new();
    for op in ["add", "sub", "mul", "and", "or", "xor", "and_not"] {
        fixtures.push(fixture(&format!(
            "{}{} c = {op}.i128 a, b\n{}",
            pair("a", "rdx", "rax"),
            pair("b", "rbx", "rcx"),
            out("c")
        )));
    }
    for op in ["not", "neg"] {
        fixtures.push(fixture(&format!("{} c = {op}.i128 a\n{}", pair("a", "rdx", "rax"), out("c"))));
    }
    for op in ["shl", "lshr", "ashr"] {
        for amount in ["i8", "i64"] {
            fixtures.push(fixture(&format!(
                "{}{} c = {op}.i128 a, n\n{}",
                pair("a", "rdx", "rax"),
                int_operand("n", "rcx", amount),
                out("c")
            )));
        }
        // Amounts around the half and the whole width.
        for n in [0, 1, 63, 64, 65, 127, 128, 200] {
            fixtures.push(fixture(&format!(
                "{} n = iconst.i64 {n}\n c = {op}.i128 a, n\n{}",
                pair("a", "rdx", "rax"),
                out("c")
            )));
        }
    }
    for (op, ext) in [("udiv", "zext"), ("urem", "zext"), ("sdiv", "sext"), ("srem", "sext")] {
        fixtures.push(fixture(&format!(
            "{} d = get rcx\n e = {ext}.i128 d\n c = {op}.i128 a, e\n t = trunc.i64 c\n set rsi, t\n{}",
            pair("a", "rdx", "rax"),
            out("c")
        )));
        fixtures.push(fixture(&format!(
            "{}{} c = {op}.i128 a, b\n{}",
            pair("a", "rdx", "rax"),
            pair("b", "rbx", "rcx"),
            out("c")
        )));
    }
    for cond in ["eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"] {
        fixtures.push(fixture(&format!(
            "{}{} c = icmp.i128 {cond} a, b\n{}",
            pair("a", "rdx", "rax"),
            pair("b", "rdx", "rcx"),
            set_int("c", "i1")
        )));
    }
    for from in ["i1", "i8", "i32", "i64"] {
        for op in ["zext", "sext"] {
            fixtures.push(fixture(&format!("{} c = {op}.i128 a\n{}", int_operand("a", "rax", from), out("c"))));
        }
    }
    fixtures.push(fixture(&format!(
        " x = get xmm0\n a = bitcast.i128 x\n b = trunc.i16 a\n{} f = get cf\n{} s = select.i128 f, a, c\n{}",
        set_int("b", "i16"),
        pair("c", "rbx", "rcx"),
        out("s")
    )));
    fixtures.push(fixture(" a = get rax\n b = parity.i64 a\n x = get xmm0\n y = bitcast.i128 x\n z = parity.i128 y\n w = xor.i1 b, z\n set pf, w"));
    run_fixtures("i128_ops", &fixtures);
}

/// Scalar operand `name` of float type `ty` from lane `lane` of `reg`.
fn float_operand(name: &str, reg: &str, ty: &str, lane: u32) -> String {
    let shape = if ty == "f32" { "f32x4" } else { "f64x2" };
    format!(" {name}x = get {reg}\n {name} = extract_lane.{shape} {name}x, {lane}\n")
}

/// Puts float `v` of `ty` into lane 0 of xmm0 and the result in xmm2.
fn set_float(v: &str, ty: &str) -> String {
    let shape = if ty == "f32" { "f32x4" } else { "f64x2" };
    format!(" base = get xmm3\n ins = insert_lane.{shape} base, {v}, 0\n set xmm2, ins\n")
}

#[test]
fn scalar_floats() {
    let mut fixtures = Vec::new();
    for ty in ["f32", "f64"] {
        for (lane_a, lane_b) in [(0, 0), (1, 1)] {
            for op in ["fadd", "fsub", "fmul", "fdiv", "fmin", "fmax"] {
                fixtures.push(fixture(&format!(
                    "{}{} c = {op}.{ty} a, b\n{}",
                    float_operand("a", "xmm0", ty, lane_a),
                    float_operand("b", "xmm1", ty, lane_b),
                    set_float("c", ty)
                )));
            }
            fixtures.push(fixture(&format!(
                "{} c = fsqrt.{ty} a\n{}",
                float_operand("a", "xmm0", ty, lane_a),
                set_float("c", ty)
            )));
            // An operand used twice.
            fixtures.push(fixture(&format!(
                "{} c = fadd.{ty} a, a\n{}",
                float_operand("a", "xmm0", ty, lane_a),
                set_float("c", ty)
            )));
        }
        for cond in ["eq", "lt", "le", "uno", "une", "nlt", "nle", "ord"] {
            fixtures.push(fixture(&format!(
                "{}{} c = fcmp.{ty} {cond} a, b\n{}",
                float_operand("a", "xmm0", ty, 0),
                float_operand("b", "xmm1", ty, 0),
                set_int("c", "i1")
            )));
        }
        for to in ["i32", "i64"] {
            for imm in [0, 1] {
                fixtures.push(fixture(&format!(
                    "{} c = fcvt_to_sint.{to} a, {imm}\n{}",
                    float_operand("a", "xmm0", ty, 0),
                    set_int("c", to)
                )));
            }
        }
        for from in ["i8", "i16", "i32", "i64"] {
            fixtures.push(fixture(&format!(
                "{} c = sint_to_f.{ty} a\n{}",
                int_operand("a", "rax", from),
                set_float("c", ty)
            )));
        }
        let other = if ty == "f32" { "f64" } else { "f32" };
        fixtures.push(fixture(&format!(
            "{} c = fconvert.{other} a\n{}",
            float_operand("a", "xmm0", ty, 0),
            set_float("c", other)
        )));
        fixtures.push(fixture(&format!(
            "{} i = bitcast.{} a\n{}",
            float_operand("a", "xmm0", ty, 1),
            if ty == "f32" { "i32" } else { "i64" },
            set_int("i", if ty == "f32" { "i32" } else { "i64" })
        )));
    }
    run_fixtures("scalar_floats", &fixtures);
}

#[test]
fn float_vectors() {
    let mut fixtures = Vec::new();
    let two = |op: &str| format!(" a = get xmm0\n b = get xmm1\n c = {op} a, b\n set xmm2, c");
    for ty in ["f32x4", "f64x2"] {
        for op in ["fadd", "fsub", "fmul", "fdiv", "fmin", "fmax"] {
            fixtures.push(fixture(&two(&format!("{op}.{ty}"))));
        }
        fixtures.push(fixture(&format!(" a = get xmm0\n c = fsqrt.{ty} a\n set xmm2, c")));
        for cond in ["eq", "lt", "le", "uno", "une", "nlt", "nle", "ord"] {
            fixtures.push(fixture(&two(&format!("fcmp.{ty} {cond}"))));
        }
        fixtures.push(fixture(&format!(" a = get xmm0\n c = sint_to_f.{ty} a\n set xmm2, c")));
        fixtures.push(fixture(&format!(" a = get xmm0\n c = fconvert.{ty} a\n set xmm2, c")));
    }
    for imm in 0..4 {
        fixtures.push(fixture(&format!(" a = get xmm0\n c = fcvt_to_sint.i32x4 a, {imm}\n set xmm2, c")));
    }
    run_fixtures("float_vectors", &fixtures);
}

#[test]
fn integer_vectors() {
    let mut fixtures = Vec::new();
    let two = |op: &str| format!(" a = get xmm0\n b = get xmm1\n c = {op} a, b\n set xmm2, c");
    let shapes = ["i8x16", "i16x8", "i32x4", "i64x2"];
    for ty in shapes {
        for op in [
            "add",
            "sub",
            "mul",
            "umulh",
            "smulh",
            "and",
            "or",
            "xor",
            "and_not",
            "umin",
            "umax",
            "smin",
            "smax",
            "add_sat_u",
            "add_sat_s",
            "sub_sat_u",
            "sub_sat_s",
        ] {
            fixtures.push(fixture(&two(&format!("{op}.{ty}"))));
        }
        if ty != "i64x2" {
            fixtures.push(fixture(&two(&format!("avg_u.{ty}"))));
            fixtures.push(fixture(&format!(" a = get xmm0\n c = clz.{ty} a\n set xmm2, c")));
        }
        for cond in ["eq", "ne", "ult", "ule", "ugt", "uge", "slt", "sle", "sgt", "sge"] {
            fixtures.push(fixture(&two(&format!("icmp.{ty} {cond}"))));
        }
        for op in ["shl", "lshr", "ashr"] {
            for amount in ["i64", "i8"] {
                fixtures.push(fixture(&format!(
                    " a = get xmm0\n{} c = {op}.{ty} a, n\n set xmm2, c",
                    int_operand("n", "rcx", amount)
                )));
            }
        }
        for op in ["not", "neg"] {
            fixtures.push(fixture(&format!(" a = get xmm0\n c = {op}.{ty} a\n set xmm2, c")));
        }
        for op in ["unpack_lo", "unpack_hi"] {
            fixtures.push(fixture(&two(&format!("{op}.{ty}"))));
        }
        fixtures.push(fixture(&format!(" a = get xmm0\n m = movmsk.{ty} a\n{}", set_int("m", "i32"))));
        let lane = &ty[..ty.find('x').expect("a shape")];
        fixtures.push(fixture(&format!("{} s = splat.{ty} x\n set xmm2, s", int_operand("x", "rax", lane))));
        let last = 128 / lane[1..].parse::<u32>().expect("lane bits") - 1;
        for i in [0, last] {
            fixtures.push(fixture(&format!(" a = get xmm0\n e = extract_lane.{ty} a, {i}\n{}", set_int("e", lane))));
            fixtures.push(fixture(&format!(
                " a = get xmm0\n{} c = insert_lane.{ty} a, x, {i}\n set xmm2, c",
                int_operand("x", "rax", lane)
            )));
        }
    }
    fixtures.push(fixture(" a = get xmm0\n c = popcnt.i8x16 a\n set xmm2, c"));
    fixtures.push(fixture(&two("add.v128")));
    fixtures.push(fixture(" a = get xmm0\n m = movmsk.f32x4 a\n r = zext.i64 m\n set rdx, r"));
    fixtures.push(fixture(" a = get xmm0\n m = movmsk.f64x2 a\n r = zext.i64 m\n set rdx, r"));
    for imm in [0x1b, 0x00, 0xe4, 0x4e, 0x39] {
        fixtures.push(fixture(&format!(" a = get xmm0\n c = shuffle.i32x4 a, {imm}\n set xmm2, c")));
        fixtures.push(fixture(&format!(" a = get xmm0\n c = shuffle.f32x4 a, {imm}\n set xmm2, c")));
        fixtures.push(fixture(&format!(" a = get xmm0\n c = shuffle.i16x8 a, {imm}\n set xmm2, c")));
        fixtures.push(fixture(&format!(" a = get xmm0\n c = shuffle.i16x8 a, {}\n set xmm2, c", imm | 0x100)));
        fixtures.push(fixture(&format!(" a = get xmm0\n b = get xmm1\n c = shuffle2.f32x4 a, b, {imm}\n set xmm2, c")));
    }
    for imm in 0..4 {
        fixtures.push(fixture(&format!(" a = get xmm0\n b = get xmm1\n c = shuffle2.f64x2 a, b, {imm}\n set xmm2, c")));
    }
    for ty in ["i8x16", "i16x8", "i32x4"] {
        fixtures.push(fixture(&two(&format!("narrow_s.{ty}"))));
        fixtures.push(fixture(&two(&format!("narrow_u.{ty}"))));
    }
    for n in [0, 1, 7, 8, 15, 16] {
        fixtures.push(fixture(&format!(" a = get xmm0\n c = byte_shl.v128 a, {n}\n set xmm2, c")));
        fixtures.push(fixture(&format!(" a = get xmm0\n c = byte_shr.v128 a, {n}\n set xmm2, c")));
    }
    fixtures.push(fixture(&two("mul_add_pairs.i32x4")));
    fixtures.push(fixture(&two("sum_abs_diff.i64x2")));
    fixtures.push(fixture(&two("mul_even_u.i64x2")));
    run_fixtures("integer_vectors", &fixtures);
}

#[test]
fn memory_atomics_and_flow() {
    let mut fixtures = Vec::new();
    // Aligned addresses, then any alignment (ldar, stlr and the LSE
    // atomics need the slow path there).
    for mask in ["0x3f0", "0x3ff"] {
        let addr =
            format!(" p = get rdi\n o = get rsi\n m = iconst.i64 {mask}\n q = and.i64 o, m\n a = add.i64 p, q\n");
        let addr = addr.as_str();
        for ty in ["i8", "i16", "i32", "i64", "f32", "f64", "v128", "i128", "f32x4"] {
            for flags in ["", " ordered"] {
                let value = match ty {
                    "f32" => float_operand("x", "xmm0", "f32", 0),
                    "f64" => float_operand("x", "xmm0", "f64", 0),
                    "v128" | "f32x4" => " x = get xmm0\n".to_string(),
                    "i128" => " y = get xmm0\n x = bitcast.i128 y\n".to_string(),
                    _ => int_operand("x", "rax", ty),
                };
                let back = match ty {
                    "f32" | "f64" => set_float("l", ty),
                    "v128" | "f32x4" => " set xmm2, l\n".to_string(),
                    "i128" => " z = bitcast.v128 l\n set xmm2, z\n".to_string(),
                    _ => set_int("l", ty),
                };
                fixtures.push(fixture(&format!(
                    "{addr}{value} store.{ty}{flags} a, x\n k = iconst.i64 0x8\n a2 = add.i64 a, k\n l = load.{ty}{flags} a2\n{back}"
                )));
            }
        }
        for ty in ["i8", "i16", "i32", "i64"] {
            for op in ["add", "and", "or", "xor", "xchg"] {
                fixtures.push(fixture(&format!(
                    "{addr}{} old = atomic_rmw.{ty} {op} a, x\n{}",
                    int_operand("x", "rax", ty),
                    set_int("old", ty)
                )));
            }
            fixtures.push(fixture(&format!(
                "{addr} l = load.{ty} a\n{} f = get cf\n e = select.{ty} f, l, x\n{} old = atomic_cas.{ty} a, e, n\n{}",
                int_operand("x", "rax", ty),
                int_operand("n", "rcx", ty),
                set_int("old", ty)
            )));
        }
    }
    // A diamond and a loop over memory.
    fixtures.push(number(
        "region 0x1000\nblock0:\n insn 0x1000, 3\n x = get rax\n y = get rcx\n c = icmp.i64 slt x, y\n brif c, block1, block2\n\
         block1:\n insn 0x1003, 2\n d = sub.i64 y, x\n set rdx, d\n jump block3\n\
         block2:\n insn 0x1005, 2\n e = sub.i64 x, y\n set rdx, e\n jump block3\n\
         block3:\n insn 0x1007, 2\n call rdtsc\n f = get rdx\n z = iconst.i64 0x0\n g = icmp.i64 eq f, z\n brif g, block4, block5\n\
         block4:\n trap divzero 0x1007\n\
         block5:\n exit_indirect ret x\n",
    ));
    fixtures.push(number(
        "region 0x1000\nblock0:\n p = get rdi\n n = get rcx\n m = iconst.i64 0x1f\n k = and.i64 n, m\n z = iconst.i64 0x0\n set rcx, k\n jump block1\n\
         block1:\n i = get rcx\n done = icmp.i64 eq i, z\n brif done, block3, block2\n\
         block2:\n s = iconst.i64 0x3\n sh = shl.i64 i, s\n a = add.i64 p, sh\n w = load.i64 a\n acc = get rbx\n acc2 = add.i64 acc, w\n\
         set rbx, acc2\n store.i64 a, acc2\n one = iconst.i64 0x1\n j = sub.i64 i, one\n set rcx, j\n jump block1\n\
         block3:\n exit call 0x3000\n",
    ));
    fixtures.push(fixture(
        " a = get cf\n b = get pf\n c = get af\n d = get zf\n e = get sf\n f = get of\n g = get df\n\
         h = xor.i1 a, b\n i = and.i1 c, d\n j = or.i1 e, f\n k = not.i1 g\n set cf, k\n set pf, h\n set af, i\n set zf, j\n\
         set sf, a\n set of, g\n set df, d\n x = get mxcsr\n y = get fpcw\n zx = zext.i32 y\n w = xor.i32 x, zx\n set mxcsr, w",
    ));
    run_fixtures("memory_atomics_and_flow", &fixtures);
}
