// Does not compile: the variable is never declared.
kernel void broken(global float *y) {
	y[0] = undeclared_value;
}
