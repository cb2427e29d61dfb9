//! Process controls: prctl and personality. The generic prctl options have the same numbers
//! and argument layouts on x86-64 and arm64 and go to the host; the
//! others are refused with EINVAL, as a kernel without them does: the
//! arch-specific ones (x86's PR_GET_TSC, arm64's PR_SVE_*, ...), and those
//! that would act on aarchx rather than on the guest (PR_SET_SECCOMP,
//! PR_SET_MM, PR_GET_TID_ADDRESS, PR_SET_SYSCALL_USER_DISPATCH,
//! PR_SET_MDWE, ...). The only personality is PER_LINUX.

use super::Errno;

/// The prctl options passed to the host: PDEATHSIG, DUMPABLE, KEEPCAPS,
/// TIMING, NAME, GET_SECCOMP, CAPBSET, SECUREBITS, TIMERSLACK,
/// TASK_PERF_EVENTS, MCE_KILL, CHILD_SUBREAPER, NO_NEW_PRIVS, THP_DISABLE,
/// CAP_AMBIENT, SET_VMA (names of anonymous memory) and SET_PTRACER.
const PASSTHROUGH_PRCTLS: [u64; 30] = [
    1,
    2,
    3,
    4,
    7,
    8,
    13,
    14,
    15,
    16,
    21,
    23,
    24,
    27,
    28,
    29,
    30,
    31,
    32,
    33,
    34,
    36,
    37,
    38,
    39,
    41,
    42,
    47,
    0x5356_4d41,
    0x5961_6d61,
];

const PER_LINUX: u64 = 0;
/// personality's argument that only asks for the current persona.
const PER_QUERY: u64 = 0xffff_ffff;

/// prctl(option, arg2, arg3, arg4, arg5).
pub(super) fn prctl(option: u64, a2: u64, a3: u64, a4: u64, a5: u64) -> Result<u64, Errno> {
    if PASSTHROUGH_PRCTLS.contains(&(option & 0xffff_ffff)) {
        host!(libc::SYS_prctl, option, a2, a3, a4, a5)
    } else {
        tracing::debug!(option, "unsupported prctl option: returning -EINVAL");
        Err(Errno::EINVAL)
    }
}

/// personality(persona): the persona is always PER_LINUX.
pub(super) fn personality(persona: u64) -> Result<u64, Errno> {
    match persona & 0xffff_ffff {
        PER_LINUX | PER_QUERY => Ok(PER_LINUX),
        _ => Err(Errno::EINVAL),
    }
}
