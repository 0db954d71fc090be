// Writes every scalar argument back, converted to double, so that the test
// can check how each argument type is passed (char, short and float2
// through Raw); scratch checks that a local
// allocation of the requested size is usable.
kernel void args(global double *out, int i32, long i64, ulong u64, float f32, double f64, local double *scratch,
                  char i8, short i16, float2 c32) {
	size_t l = get_local_id(0);
	scratch[l] = (double)l;
	barrier(CLK_LOCAL_MEM_FENCE);
	if (get_global_id(0) == 0) {
		out[0] = (double)i32;
		out[1] = (double)i64;
		out[2] = (double)u64;
		out[3] = (double)f32;
		out[4] = f64;
		out[5] = scratch[get_local_size(0) - 1];
		out[6] = (double)i8;
		out[7] = (double)i16;
		out[8] = (double)c32.x;
		out[9] = (double)c32.y;
	}
}
