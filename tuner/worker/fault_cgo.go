package worker

/*
#include <stdlib.h>

static void tltune_abort(void) { abort(); }
static void tltune_null_write(void) { *(volatile int *)0 = 1; }
*/
import "C"

// abortProcess aborts the way a C library does (abort(3)), so an injected
// abort takes the path a driver's failed assertion takes.
func abortProcess() { C.tltune_abort() }

// nullWrite segfaults in C code, as a faulty driver does.
func nullWrite() { C.tltune_null_write() }
