// A CCCL-style benchmark source.
// %RANGE% TUNE_ITEMS ipt 7:24:1
// %RANGE% TUNE_THREADS tpb 128:1024:32

#if !TUNE_BASE
#define BLOCK TUNE_THREADS
#endif
void kernel() {}
