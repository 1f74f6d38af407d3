# The numerical contract's compiler flags, set once for every target that computes.
# See docs/contract.md: no contraction, no fast math, IEEE division and square root,
# subnormals preserved.
set(BITLEARN_CONTRACT_CXX_FLAGS -ffp-contract=off -fno-fast-math -fno-unsafe-math-optimizations
    -fno-associative-math -fno-reciprocal-math -fno-finite-math-only -fsigned-zeros -ftrapping-math
    -fno-math-errno)
set(BITLEARN_CONTRACT_CUDA_FLAGS --fmad=false -ftz=false -prec-div=true -prec-sqrt=true)

function(bitlearn_contract_flags target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${BITLEARN_CONTRACT_CXX_FLAGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:${BITLEARN_CONTRACT_CUDA_FLAGS}>
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-ffp-contract=off>)
endfunction()

# Human-readable summary, reported by `bitlearn doctor`.
string(JOIN " " BITLEARN_CONTRACT_FLAGS_STRING ${BITLEARN_CONTRACT_CXX_FLAGS})
string(JOIN " " BITLEARN_CONTRACT_CUDA_FLAGS_STRING ${BITLEARN_CONTRACT_CUDA_FLAGS})
