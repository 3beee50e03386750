package broker

import "syscall"

var errTooManyFiles error = syscall.EMFILE
