//! Frames too large for the simple prologue: spill slots beyond the reach
//! of every load/store immediate.

use crate::exec_tests::{check, pack, region, state_with, GuestMem};

#[test]
fn large_frames() {
    // Enough values that slots lie beyond the reach of every load/store
    // immediate and the frame needs a two-part stack adjustment.
    let mut text = String::from("region 0x1000\nblock0:\n v0 = get rax\n v1 = iconst.i64 0x3\n");
    let n = 5000;
    for i in 2..n {
        let prev = if i == 2 { 0 } else { i - 1 };
        text.push_str(&format!(" v{i} = add.i64 v{prev}, v1\n"));
    }
    text.push_str(&format!(
        " set rax, v{}\n v{n} = get xmm0\n v{} = fadd.f32x4 v{n}, v{n}\n set xmm0, v{}\n exit jump 0x1000\n",
        n - 1,
        n + 1,
        n + 1
    ));
    let out =
        check(&region(&text), &state_with(&[("rax", 1), ("xmm0", pack(32, [0x3f80_0000; 4]))]), &mut GuestMem::new());
    assert_eq!(out.state.gpr[0], 1 + 3 * (n as u64 - 2));
    assert_eq!(out.state.xmm[0], pack(32, [0x4000_0000; 4]));
}
