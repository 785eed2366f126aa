/*
 * progname.c - names of OpenNSR RPC programs, for messages.
 */
#include "nsr/compat.h"

#include "nsr/rpc.h"
#include "nsr/rpc/nsrd.h"
#include "nsr/rpc/nsrexecd.h"
#include "nsr/rpc/nsrindex.h"
#include "nsr/rpc/nsrjob.h"
#include "nsr/rpc/nsrmmd.h"
#include "nsr/rpc/nsrmmdb.h"
#include "nsr/rpc/nsrsnm.h"

/* nsr_rpc_prog_name - daemon name of an OpenNSR program number. */
const char *nsr_rpc_prog_name(uint32_t prog)
{
	switch (prog) {
	case NSRD_PROG: return "nsrd";
	case NSREXECD_PROG: return "nsrexecd";
	case NSRINDEXD_PROG: return "nsrindexd";
	case NSRJOBD_PROG: return "nsrjobd";
	case NSRMMD_PROG: return "nsrmmd";
	case NSRMMDBD_PROG: return "nsrmmdbd";
	case NSRSNMD_PROG: return "nsrsnmd";
	}
	return "unknown program";
}
