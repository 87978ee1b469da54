// The CUPTI side of libocctrace.so: one subscriber, resource/state callbacks, activity buffer
// callbacks, and the TraceSession they feed. Everything here runs inside the traced program.
#pragma once

namespace occ::inj {

// The body of InitializeInjection (called by the CUDA driver inside the first cuInit, once per
// process). Always returns 1: any failure is one "occtrace:" line and an untraced program,
// never an error the driver would act on.
int InitializeTracing();

}  // namespace occ::inj
