# The freestanding decision core: every file here is compiled both into
# blkiso.ko (Kbuild) and into the user-space unit tests and tools (Makefile).
# One source a line; keep it sorted.
BLKISO_CORE_SRCS :=
BLKISO_CORE_SRCS += admit.c
BLKISO_CORE_SRCS += bucket.c
BLKISO_CORE_SRCS += classify.c
BLKISO_CORE_SRCS += conf.c
BLKISO_CORE_SRCS += ctl_depth.c
BLKISO_CORE_SRCS += ctl_isolation.c
BLKISO_CORE_SRCS += ctl_overload.c
BLKISO_CORE_SRCS += ctl_rate.c
BLKISO_CORE_SRCS += dispense.c
BLKISO_CORE_SRCS += feedback.c
BLKISO_CORE_SRCS += grammar.c
BLKISO_CORE_SRCS += lease.c
BLKISO_CORE_SRCS += meter.c
BLKISO_CORE_SRCS += pathrule.c
BLKISO_CORE_SRCS += tokadapt.c
BLKISO_CORE_SRCS += units.c
