//! Every built-in pass over regions holding every opcode of the IR: a pass
//! must handle (transform or leave alone) any op, with constant operands
//! (what `const-fold` evaluates) and with operands no pass can know, and
//! its output must verify. The instances are found by trying types and
//! immediates against the verifier, so a new opcode is covered as soon as
//! it is declared (and the test says so if no valid instance is found).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};

use aarchx_ir::region::BlockData;
use aarchx_ir::verify::verify;
use aarchx_ir::{Format, InstData, Opcode, Reg, Region, Type, Value};
use aarchx_pass::{CpuLevel, GuestCode, MemoryModel, Options, PassContext, Stage, TranslationConfig};

/// How the operands of the op under test are made.
#[derive(Clone, Copy, Debug)]
enum Operands {
    Constant,
    Opaque,
}

struct NoCode;

impl GuestCode for NoCode {
    fn read(&self, _addr: u64, _buf: &mut [u8]) -> usize {
        0
    }
}

fn push(r: &mut Region, block: usize, d: InstData) -> Value {
    let v = r.add_inst(d);
    r.blocks[block].insts.push(v);
    v
}

fn inst(op: Opcode, ty: Type, aux: u16, args: [u32; 3]) -> InstData {
    InstData { op, ty, aux, args }
}

fn rax() -> Reg {
    Reg::all().find(|r| r.to_string() == "rax").expect("rax")
}

fn xmm0() -> Reg {
    Reg::all().find(|r| r.to_string() == "xmm0").expect("xmm0")
}

/// A value of type `ty` in block 0: a constant, or a guest register's
/// value reshaped to `ty`.
fn source(r: &mut Region, ty: Type, how: Operands) -> Value {
    let int64 = |r: &mut Region| match how {
        Operands::Constant => push(r, 0, inst(Opcode::Iconst, Type::I64, 0, [0x89ab_cdef, 0x0123_4567, 0])),
        Operands::Opaque => push(r, 0, inst(Opcode::Get, Type::I64, rax().0, [0; 3])),
    };
    let wide = |r: &mut Region| match how {
        Operands::Constant => {
            let c = int64(r);
            push(r, 0, inst(Opcode::Zext, Type::I128, 0, [c.0, 0, 0]))
        }
        Operands::Opaque => push(r, 0, inst(Opcode::Get, Type::V128, xmm0().0, [0; 3])),
    };
    match ty {
        Type::I64 => int64(r),
        Type::I1 | Type::I8 | Type::I16 | Type::I32 => match how {
            Operands::Constant => push(r, 0, inst(Opcode::Iconst, ty, 0, [0x89ab_cdef & mask(ty), 0, 0])),
            Operands::Opaque => {
                let v = int64(r);
                push(r, 0, inst(Opcode::Trunc, ty, 0, [v.0, 0, 0]))
            }
        },
        Type::F32 => {
            let v = source(r, Type::I32, how);
            push(r, 0, inst(Opcode::Bitcast, ty, 0, [v.0, 0, 0]))
        }
        Type::F64 => {
            let v = int64(r);
            push(r, 0, inst(Opcode::Bitcast, ty, 0, [v.0, 0, 0]))
        }
        _ => {
            let v = wide(r);
            if r.value_type(v) == ty {
                v
            } else {
                push(r, 0, inst(Opcode::Bitcast, ty, 0, [v.0, 0, 0]))
            }
        }
    }
}

fn mask(ty: Type) -> u32 {
    if ty.bits() >= 32 {
        u32::MAX
    } else {
        (1 << ty.bits()) - 1
    }
}

/// A region whose block 0 applies `op` (type `ty`, immediate `aux`) to
/// operands of `arg_types`, made `how`; its result is stored, so it is
/// used. Terminators branch to blocks 1 and 2, which leave the region.
fn instance(op: Opcode, ty: Type, aux: u16, arg_types: &[Type], how: Operands) -> Region {
    let mut r = Region::new(0x1000);
    r.blocks.push(BlockData::default());
    let mut args = [0u32; 3];
    for (i, t) in arg_types.iter().enumerate() {
        args[i] = source(&mut r, *t, how).0;
    }
    let format = op.format();
    match format {
        Format::Const => args = [0x1234, 0, 0],
        Format::Mark | Format::Exit | Format::Trap => args[..2].copy_from_slice(&[0x2000, 0]),
        Format::Count => args = [0, 1, 0],
        Format::Jump => args[0] = 1,
        Format::Brif => args[1..].copy_from_slice(&[1, 2]),
        Format::Probe => args[1] = 1,
        _ => {}
    }
    let aux = match format {
        Format::Get | Format::Set => rax().0,
        _ => aux,
    };
    let v = push(&mut r, 0, inst(op, ty, aux, args));
    if format.has_result() {
        let stored =
            if r.value_type(v) == Type::I1 { push(&mut r, 0, inst(Opcode::Zext, Type::I8, 0, [v.0, 0, 0])) } else { v };
        let addr = push(&mut r, 0, inst(Opcode::Iconst, Type::I64, 0, [0x5000, 0, 0]));
        let ty = r.value_type(stored);
        push(&mut r, 0, inst(Opcode::Store, ty, 0, [addr.0, stored.0, 0]));
    }
    let leave = |r: &mut Region, b: usize| push(r, b, inst(Opcode::Exit, Type::I64, 0, [0x3000, 0, 0]));
    if !format.is_terminator() {
        leave(&mut r, 0);
    }
    for b in 1..3 {
        r.blocks.push(BlockData::default());
        leave(&mut r, b);
    }
    r
}

/// A valid instance of `op` (its type, immediate and operand types), found
/// by trying them against the verifier.
fn find_instance(op: Opcode) -> Option<(Type, u16, Vec<Type>)> {
    let n = op.format().value_args();
    for ty in Type::ALL {
        let mut candidates = vec![ty, Type::I1, Type::I8, Type::I32, Type::I64, Type::I128, Type::V128, ty.lane_type()];
        if ty.is_int() && ty.bits() >= 16 {
            candidates.extend(Type::ALL.iter().copied().filter(|t| t.is_int() && t.bits() * 2 == ty.bits()));
        }
        candidates.extend(Type::ALL);
        candidates.dedup();
        let mut tuples: Vec<Vec<Type>> = vec![Vec::new()];
        for _ in 0..n {
            tuples = tuples
                .into_iter()
                .flat_map(|t| candidates.iter().map(move |c| [t.clone(), vec![*c]].concat()))
                .collect();
        }
        for aux in [0u16, 1, 2, 3, 0x1b] {
            for args in &tuples {
                if verify(&instance(op, ty, aux, args, Operands::Constant)).is_ok() {
                    return Some((ty, aux, args.clone()));
                }
            }
        }
    }
    None
}

#[test]
fn every_pass_handles_every_opcode() {
    let mut failures = Vec::new();
    let mut instances = Vec::new();
    for &op in Opcode::ALL {
        match find_instance(op) {
            Some(found) => instances.push((op, found)),
            None => failures.push(format!("no valid instance of `{op}` found: extend `instance`")),
        }
    }
    let configs = [MemoryModel::Plain, MemoryModel::Ordered].map(|memory_model| TranslationConfig {
        memory_model,
        tso_vector: true,
        cpu_level: CpuLevel::V3,
        superblocks: true,
    });
    for info in aarchx_passes::BUILTIN.iter().filter(|i| i.stage != Stage::Decode) {
        let declared: Vec<(&str, _)> = info.options.iter().map(|o| (o.name, (o.default)())).collect();
        let options = Options::validate(&declared, &BTreeMap::new()).expect("defaults are valid");
        for (op, (ty, aux, args)) in &instances {
            for how in [Operands::Constant, Operands::Opaque] {
                for config in &configs {
                    let mut region = instance(*op, *ty, *aux, args, how);
                    let mut pass = (info.create)(&options);
                    let cx = PassContext { code: &NoCode, config };
                    let what = format!("`{}` on `{op}.{ty}` with {how:?} operands", info.name);
                    match catch_unwind(AssertUnwindSafe(|| pass.run(&cx, &mut region))) {
                        Err(_) => failures.push(format!("{what}: panicked")),
                        Ok(Err(e)) => failures.push(format!("{what}: failed: {e}")),
                        Ok(Ok(())) => {
                            if let Err(e) = verify(&region) {
                                failures.push(format!("{what}: invalid IR: {e}"));
                            }
                        }
                    }
                }
            }
        }
    }
    assert!(failures.is_empty(), "{} failures:\n{}", failures.len(), failures.join("\n"));
}
