/* Test-only emulation of the cl_intel_subgroup_matrix_multiply_accumulate
 * built-ins that tltune's intel target calls (fp16 and bfloat16 sources,
 * K = 16, M = 8 rows, fp32 accumulator), in OpenCL C with cl_intel_subgroups
 * shuffles. Prepended to the intel target's OpenCL C, it runs that code on
 * a device without DPAS (PoCL 5), so that a test can compare the result
 * with the reference interpreter and so prove the operand layouts the
 * emitter builds. An Intel GPU with the extension has its own.
 *
 * The operands, as the extension's OpenCL C specification describes them
 * (N, the number of columns, is the subgroup size):
 *   a    M rows by K columns, one row per vector component. Every work item
 *        contributes 32 bits of each row at subgroup size 8 (int8: two
 *        16-bit values) and 16 bits at subgroup size 16 (short8: one).
 *        A row's K values are the contributions of lanes 0, 1, ... in
 *        order, the low 16 bits of a 32-bit contribution first.
 *   b    K rows by N columns, one column per work item: the column's K
 *        16-bit values packed in pairs into 8 32-bit components, the low
 *        half holding the lower row.
 *   acc  M rows by N columns, one column per work item, one row per
 *        component, fp32; the result has the same layout.
 *
 * A product of two fp16 or two bfloat16 values is exact in fp32; the
 * products are summed in K order with fma. The subgroup size must be the
 * one the overload is for (8 with int8 a, 16 with short8 a): anything else
 * gives NaN, so that a wrong subgroup size cannot pass for a layout
 * (unless DPAS_EMU_NO_SIZE_CHECK is defined). */

#ifndef DPAS_EMULATION_H
#define DPAS_EMULATION_H

/* The value of an fp16 or bfloat16 element, from the low 16 bits of x. */
static inline float __dpas_emu_value(uint x, int bf16)
{
    const ushort bits = (ushort)(x & 0xffffu);
    if (bf16)
        return as_float((uint)bits << 16);
    return vload_half(0, (const private half*)&bits);
}

/* acc + a·b for this work item's column of the result. per_lane is the
 * number of K values each lane contributes to a row of a (2 at subgroup
 * size 8, 1 at 16); a holds those contributions, zero-extended to 32 bits.
 * A device that emulates shuffles with barriers (PoCL on a CPU) compiles
 * each one as a barrier region, so the contributions of several rows are
 * packed into 64-bit words and shuffled together: 32 shuffles a call, not
 * 128 (PoCL 5.0 has no vector overloads of intel_sub_group_shuffle). */
static inline float8 __dpas_emu_mad(uint8 a, uint8 b, float8 acc, uint per_lane, int bf16)
{
#ifndef DPAS_EMU_NO_SIZE_CHECK
    /* Linked into a SPIR-V module instead, the emulation cannot ask: PoCL
     * 5 defines the subgroup size for the kernel's own code only. */
    if (get_sub_group_size() * per_lane != 16)
        return (float8)(NAN);
#endif
    const uint bits = 16 * per_lane;   /* of one row's contribution */
    const uint per_word = 64 / bits;   /* rows packed in a 64-bit word */
    const ulong mask = (1ul << bits) - 1;
    uint rows[8], pairs[8];
    float sums[8];
    ulong words[4] = {0, 0, 0, 0};
    vstore8(a, 0, rows);
    vstore8(b, 0, pairs);
    vstore8(acc, 0, sums);
    for (uint m = 0; m < 8; ++m)
        words[m / per_word] |= (rows[m] & mask) << (bits * (m % per_word));
    for (uint lane = 0; lane < 16 / per_lane; ++lane) {
        ulong got[4];
        for (uint w = 0; w < 8 / per_word; ++w)
            got[w] = intel_sub_group_shuffle(words[w], lane);
        for (uint j = 0; j < per_lane; ++j) {
            const uint k = lane * per_lane + j;
            const float b_k = __dpas_emu_value(pairs[k / 2] >> (16 * (k % 2)), bf16);
            for (uint m = 0; m < 8; ++m) {
                const uint a_mk = (uint)(got[m / per_word] >> (bits * (m % per_word) + 16 * j));
                sums[m] = fma(__dpas_emu_value(a_mk, bf16), b_k, sums[m]);
            }
        }
    }
    return vload8(0, sums);
}

/* Subgroup size 8: every lane contributes two K values of each row. */
float8 __attribute__((overloadable)) intel_sub_group_f16_f16_matrix_mad_k16(int8 a, int8 b, float8 acc)
{
    return __dpas_emu_mad(as_uint8(a), as_uint8(b), acc, 2, 0);
}

float8 __attribute__((overloadable)) intel_sub_group_bf16_bf16_matrix_mad_k16(int8 a, int8 b, float8 acc)
{
    return __dpas_emu_mad(as_uint8(a), as_uint8(b), acc, 2, 1);
}

/* Subgroup size 16: every lane contributes one K value of each row. */
float8 __attribute__((overloadable)) intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc)
{
    return __dpas_emu_mad(convert_uint8(as_ushort8(a)), as_uint8(b), acc, 1, 0);
}

float8 __attribute__((overloadable)) intel_sub_group_bf16_bf16_matrix_mad_k16(short8 a, int8 b, float8 acc)
{
    return __dpas_emu_mad(convert_uint8(as_ushort8(a)), as_uint8(b), acc, 1, 1);
}

#endif
