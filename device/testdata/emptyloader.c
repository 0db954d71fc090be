/* An OpenCL "loader" that lists no platform: the state of an ICD loader on
 * a GPU machine whose driver installed no .icd file. The test builds it with
 * gcc and points tltune at it. */
typedef int cl_int;
typedef unsigned int cl_uint;

cl_int clGetPlatformIDs(cl_uint n, void **platforms, cl_uint *num) {
	(void)n;
	(void)platforms;
	if (num)
		*num = 0;
	return -1001; /* CL_PLATFORM_NOT_FOUND_KHR, as ocl-icd answers */
}
