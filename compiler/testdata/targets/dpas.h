/* Prototypes of the DPAS builtins tltune calls, as
 * cl_intel_subgroup_matrix_multiply_accumulate lists them, for compiling
 * the intel target's OpenCL C with clang (whose header lacks them). An
 * Intel GPU driver provides them itself. */
float8 __attribute__((overloadable)) intel_sub_group_f16_f16_matrix_mad_k16(int8 a, int8 b, float8 acc);
float8 __attribute__((overloadable)) intel_sub_group_bf16_bf16_matrix_mad_k16(int8 a, int8 b, float8 acc);
float8 __attribute__((overloadable)) intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc);
float8 __attribute__((overloadable)) intel_sub_group_bf16_bf16_matrix_mad_k16(short8 a, int8 b, float8 acc);
