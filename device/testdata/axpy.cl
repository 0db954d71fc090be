// y := a*x + y over the first n elements; the test launches more work-items
// than elements so that the guard is exercised.
kernel void axpy(float a, global const float *x, global float *y, int n) {
	int i = get_global_id(0);
	if (i < n)
		y[i] = a * x[i] + y[i];
}
