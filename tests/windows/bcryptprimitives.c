/* A stand-in for Windows' bcryptprimitives.dll, for Wine only.
 *
 * Why: Rust's standard library (1.78 and later) takes its random numbers from ProcessPrng in
 * bcryptprimitives.dll, which every Windows since 10 has and Wine 8.0 (Debian 12) does not:
 * there every Rust program exits at once (status 53). This DLL exports ProcessPrng over
 * RtlGenRandom (advapi32's SystemFunction036), which Wine has. tests/windows/run.sh builds it
 * with MinGW and copies it into the test prefix's system32; nothing that ships contains it. */
#include <windows.h>

BOOLEAN WINAPI SystemFunction036(PVOID buffer, ULONG length);

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!SystemFunction036(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
