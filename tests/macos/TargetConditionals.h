/* A stand-in for the macOS SDK's TargetConditionals.h, for scripts/check-macos.sh only: ring's
 * C includes it to learn the Apple platform it is built for, and this Linux machine has no
 * Apple SDK. It says what the SDK says for a Mac (arm64 or x86_64); nothing is linked with it. */
#ifndef PARTNER_STAND_IN_TARGET_CONDITIONALS_H
#define PARTNER_STAND_IN_TARGET_CONDITIONALS_H
#define TARGET_OS_MAC 1
#define TARGET_OS_OSX 1
#define TARGET_OS_IPHONE 0
#define TARGET_OS_IOS 0
#define TARGET_OS_TV 0
#define TARGET_OS_WATCH 0
#define TARGET_OS_VISION 0
#define TARGET_OS_MACCATALYST 0
#define TARGET_OS_SIMULATOR 0
#define TARGET_OS_EMBEDDED 0
#endif
