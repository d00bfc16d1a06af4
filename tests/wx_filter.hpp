// wx_filter.hpp: W^X enforced by the kernel for a test process.
//
// install_wx_filter() adds a seccomp filter, on every thread of the process
// (SECCOMP_FILTER_FLAG_TSYNC), under which mmap, mprotect and pkey_mprotect
// fail with EACCES when asked for PROT_WRITE and PROT_EXEC together.  So a
// JIT that made a page writable and executable for an instant, to emit or
// patch code, fails its compile (and the test) instead of passing a
// /proc/self/maps snapshot taken at the wrong moment.
#pragma once

#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstring>
#include <string>

namespace ovscls::test {

// True when the filter is in place; else `why` says what refused it (an
// emulator without seccomp, a kernel without it).
inline bool install_wx_filter(std::string* why) {
#if defined(__x86_64__)
    constexpr unsigned kWriteExec = PROT_WRITE | PROT_EXEC;
    sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, arch)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mmap, 3, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_mprotect, 2, 0),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_pkey_mprotect, 1, 0),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        // prot is the third argument of all three (its low 32 bits here).
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(seccomp_data, args[2])),
        BPF_STMT(BPF_ALU | BPF_AND | BPF_K, kWriteExec),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, kWriteExec, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (EACCES & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    sock_fprog program = {static_cast<unsigned short>(sizeof filter / sizeof filter[0]), filter};
    if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0) {
        *why = std::string("prctl(PR_SET_NO_NEW_PRIVS): ") + std::strerror(errno);
        return false;
    }
    if (syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_TSYNC, &program) != 0) {
        *why = std::string("seccomp(SECCOMP_SET_MODE_FILTER): ") + std::strerror(errno);
        return false;
    }
    return true;
#else
    *why = "the filter is written for x86-64 system calls";
    return false;
#endif
}

}  // namespace ovscls::test
