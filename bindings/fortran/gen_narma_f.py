#!/usr/bin/env python3
"""Generate the Fortran 2008 module `narma` (narma.f90) and its C side (narma_f.c).

The table FUNCS below lists every int-returning entry point of include/narma/narma.h with
the kind of each argument; each becomes
  - a Fortran module procedure NARMA_<name>(..., ierror) taking mpi_f08 handles,
    TYPE(NARMA_Win) / TYPE(NARMA_Request), assumed-type assumed-rank buffers and an
    optional ierror, and
  - a C shim narmaf_<name>() that converts the handles (MPI_*_f2c), takes the buffers'
    addresses from their C descriptors (ISO_Fortran_binding.h) and calls NARMA_<name>.
The few calls whose Fortran form differs (strings, attributes, keyvals, status arrays) are
written by hand in the HAND_* blocks below. The outputs are committed; rerun after changing
narma.h:  bindings/fortran/gen_narma_f.py   (--check: exit 1 when the outputs are stale, or
when narma.h declares a NARMA_ function that neither FUNCS nor HAND_NAMES binds).
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))

# Argument kinds:
#   int      INTEGER, INTENT(IN)                      -> int
#   aint     INTEGER(MPI_ADDRESS_KIND), INTENT(IN)    -> MPI_Aint
#   aintout  INTEGER(MPI_ADDRESS_KIND), INTENT(OUT)   -> MPI_Aint *
#   bufin    TYPE(*), DIMENSION(..), INTENT(IN)       -> const void * (contiguous)
#   buf      TYPE(*), DIMENSION(..)                   -> void * (contiguous)
#   dtype, comm, info, op, group   TYPE(MPI_x), INTENT(IN) -> MPI_x (via MPI_x_f2c)
#   groupout TYPE(MPI_Group), INTENT(OUT)             -> MPI_Group *
#   dtypeinout TYPE(MPI_Datatype), INTENT(INOUT)      -> MPI_Datatype *
#   win      TYPE(NARMA_Win), INTENT(IN)              -> NARMA_Win
#   winout / wininout   TYPE(NARMA_Win)               -> NARMA_Win *
#   req      TYPE(NARMA_Request), INTENT(IN)          -> NARMA_Request
#   reqout / reqinout   TYPE(NARMA_Request)           -> NARMA_Request *
#   reqs     TYPE(NARMA_Request), INTENT(INOUT) :: a(*) -> NARMA_Request[]
#   cptrout  TYPE(C_PTR), INTENT(OUT)                 -> void * (really void **)
#   intout / intinout   INTEGER                        -> int *
#   flag     LOGICAL, INTENT(OUT)                      -> int *
#   index    INTEGER, INTENT(OUT), 1-based in Fortran  -> int * (0-based)
#   status   TYPE(MPI_Status), INTENT(OUT), OPTIONAL   -> MPI_Status * (or MPI_STATUS_IGNORE)
#   strin    CHARACTER(LEN=*), INTENT(IN)              -> const char * (trailing blanks dropped)
#   count    INTEGER(MPI_COUNT_KIND), INTENT(IN)       -> MPI_Count
#   infoout  TYPE(MPI_Info), INTENT(OUT)               -> MPI_Info *
#   eh       TYPE(NARMA_Errhandler), INTENT(IN)        -> NARMA_Errhandler (the Fortran handle is an
#                                                       INTEGER(C_INTPTR_T), so that the predefined
#                                                       handlers, the C constants 1 and 2, can be
#                                                       Fortran parameters)
#   ehout / ehinout  TYPE(NARMA_Errhandler)            -> NARMA_Errhandler *
#   ehfn     PROCEDURE(NARMA_Win_errhandler_function)  -> NARMA_Win_errhandler_function * (a BIND(C)
#                                                       subroutine (win, errorcode); C calls it
#                                                       with exactly those two arguments)
RMA = [("origin_addr", "bufin"), ("origin_count", "int"), ("origin_datatype", "dtype"),
       ("target_rank", "int"), ("target_disp", "aint"), ("target_count", "int"),
       ("target_datatype", "dtype")]
GET = [("origin_addr", "buf")] + RMA[1:]
GACC = [("origin_addr", "bufin"), ("origin_count", "int"), ("origin_datatype", "dtype"),
        ("result_addr", "buf"), ("result_count", "int"), ("result_datatype", "dtype"),
        ("target_rank", "int"), ("target_disp", "aint"), ("target_count", "int"),
        ("target_datatype", "dtype")]
W = [("win", "win")]
REQ = [("request", "reqout")]
# Large-count (_c) forms: the counts are INTEGER(MPI_COUNT_KIND).
RMA_C = [(a, "count" if a.endswith("_count") else k) for a, k in RMA]
GET_C = [(a, "count" if a.endswith("_count") else k) for a, k in GET]
GACC_C = [(a, "count" if a.endswith("_count") else k) for a, k in GACC]

FUNCS = [
    # Library
    ("Init", [], "NARMA_Init(NULL, NULL)"),
    ("Init_thread", [("required", "int"), ("provided", "intout")],
     "NARMA_Init_thread(NULL, NULL, required, provided)"),
    ("Query_thread", [("provided", "intout")]),
    ("Finalize", []),
    ("Alloc_mem", [("size", "aint"), ("info", "info"), ("baseptr", "cptrout")]),
    ("Free_mem", [("base", "buf")]),
    ("Type_free", [("datatype", "dtypeinout")]),
    ("Progress", []),
    # Windows
    ("Win_create", [("base", "buf"), ("size", "aint"), ("disp_unit", "int"), ("info", "info"),
                    ("comm", "comm"), ("win", "winout")]),
    ("Win_allocate", [("size", "aint"), ("disp_unit", "int"), ("info", "info"), ("comm", "comm"),
                      ("baseptr", "cptrout"), ("win", "winout")]),
    ("Win_create_dynamic", [("info", "info"), ("comm", "comm"), ("win", "winout")]),
    ("Win_allocate_shared", [("size", "aint"), ("disp_unit", "int"), ("info", "info"),
                             ("comm", "comm"), ("baseptr", "cptrout"), ("win", "winout")]),
    ("Win_shared_query", W + [("rank", "int"), ("size", "aintout"), ("disp_unit", "intout"),
                              ("baseptr", "cptrout")]),
    ("Win_free", [("win", "wininout")]),
    ("Win_attach", W + [("base", "buf"), ("size", "aint")]),
    ("Win_detach", W + [("base", "buf")]),
    ("Win_get_group", W + [("group", "groupout")]),
    ("Win_set_name", W + [("win_name", "strin")]),
    ("Win_free_keyval", [("win_keyval", "intinout")]),
    ("Win_delete_attr", W + [("win_keyval", "int")]),
    ("Win_get_info", W + [("info_used", "infoout")]),
    ("Win_set_info", W + [("info", "info")]),
    # Error handlers
    ("Win_create_errhandler", [("win_errhandler_fn", "ehfn"), ("errhandler", "ehout")]),
    ("Win_set_errhandler", W + [("errhandler", "eh")]),
    ("Win_get_errhandler", W + [("errhandler", "ehout")]),
    ("Win_call_errhandler", W + [("errorcode", "int")]),
    ("Errhandler_free", [("errhandler", "ehinout")]),
    # Synchronisation
    ("Win_fence", [("assert", "int")] + W),
    ("Win_start", [("group", "group"), ("assert", "int")] + W),
    ("Win_complete", W),
    ("Win_post", [("group", "group"), ("assert", "int")] + W),
    ("Win_wait", W),
    ("Win_test", W + [("flag", "flag")]),
    ("Win_lock", [("lock_type", "int"), ("rank", "int"), ("assert", "int")] + W),
    ("Win_unlock", [("rank", "int")] + W),
    ("Win_lock_all", [("assert", "int")] + W),
    ("Win_unlock_all", W),
    ("Win_flush", [("rank", "int")] + W),
    ("Win_flush_all", W),
    ("Win_flush_local", [("rank", "int")] + W),
    ("Win_flush_local_all", W),
    ("Win_sync", W),
    # Nonblocking synchronisation
    ("Win_ipost", [("group", "group"), ("assert", "int")] + W + REQ),
    ("Win_istart", [("group", "group"), ("assert", "int")] + W + REQ),
    ("Win_icomplete", W + REQ),
    ("Win_iwait", W + REQ),
    ("Win_ifence", [("assert", "int")] + W + REQ),
    ("Win_ilock", [("lock_type", "int"), ("rank", "int"), ("assert", "int")] + W + REQ),
    ("Win_iunlock", [("rank", "int")] + W + REQ),
    ("Win_ilock_all", [("assert", "int")] + W + REQ),
    ("Win_iunlock_all", W + REQ),
    ("Win_iflush", [("rank", "int")] + W + REQ),
    ("Win_iflush_local", [("rank", "int")] + W + REQ),
    ("Win_iflush_all", W + REQ),
    ("Win_iflush_local_all", W + REQ),
    # Communication
    ("Put", RMA + W),
    ("Get", GET + W),
    ("Accumulate", RMA + [("op", "op")] + W),
    ("Get_accumulate", GACC + [("op", "op")] + W),
    ("Fetch_and_op", [("origin_addr", "bufin"), ("result_addr", "buf"), ("datatype", "dtype"),
                      ("target_rank", "int"), ("target_disp", "aint"), ("op", "op")] + W),
    ("Compare_and_swap", [("origin_addr", "bufin"), ("compare_addr", "bufin"),
                          ("result_addr", "buf"), ("datatype", "dtype"), ("target_rank", "int"),
                          ("target_disp", "aint")] + W),
    ("Rput", RMA + W + REQ),
    ("Rget", GET + W + REQ),
    ("Raccumulate", RMA + [("op", "op")] + W + REQ),
    ("Rget_accumulate", GACC + [("op", "op")] + W + REQ),
    # Large counts
    ("Put_c", RMA_C + W),
    ("Get_c", GET_C + W),
    ("Accumulate_c", RMA_C + [("op", "op")] + W),
    ("Get_accumulate_c", GACC_C + [("op", "op")] + W),
    ("Rput_c", RMA_C + W + REQ),
    ("Rget_c", GET_C + W + REQ),
    ("Raccumulate_c", RMA_C + [("op", "op")] + W + REQ),
    ("Rget_accumulate_c", GACC_C + [("op", "op")] + W + REQ),
    ("Put_notify_c", RMA_C + W + [("tag", "int")]),
    ("Get_notify_c", GET_C + W + [("tag", "int")]),
    ("Rput_notify_c", RMA_C + W + REQ + [("tag", "int")]),
    ("Rget_notify_c", GET_C + W + REQ + [("tag", "int")]),
    ("Accumulate_notify_c", RMA_C + [("op", "op")] + W + [("tag", "int")]),
    # Notified access
    ("Put_notify", RMA + W + [("tag", "int")]),
    ("Get_notify", GET + W + [("tag", "int")]),
    ("Rput_notify", RMA + W + REQ + [("tag", "int")]),
    ("Rget_notify", GET + W + REQ + [("tag", "int")]),
    ("Accumulate_notify", RMA + [("op", "op")] + W + [("tag", "int")]),
    ("Get_accumulate_notify", GACC + [("op", "op")] + W + [("tag", "int")]),
    ("Rget_accumulate_notify", GACC + [("op", "op")] + W + [("tag", "int")] + REQ),
    ("Fetch_and_op_notify", [("origin_addr", "bufin"), ("result_addr", "buf"),
                             ("datatype", "dtype"), ("target_rank", "int"),
                             ("target_disp", "aint"), ("op", "op")] + W + [("tag", "int")]),
    ("Compare_and_swap_notify", [("origin_addr", "bufin"), ("compare_addr", "bufin"),
                                 ("result_addr", "buf"), ("datatype", "dtype"),
                                 ("target_rank", "int"), ("target_disp", "aint")] + W +
     [("tag", "int")]),
    ("Put_notify_init", RMA + W + [("tag", "int")] + REQ),
    ("Get_notify_init", GET + W + [("tag", "int")] + REQ),
    ("Accumulate_notify_init", RMA + [("op", "op")] + W + [("tag", "int")] + REQ),
    ("Notify_init", W + [("src_rank", "int"), ("tag", "int"), ("expected_count", "int")] + REQ),
    # Counter-indexed notifications (the MPI-5.1 draft's model)
    ("Win_set_num_notify", W + [("info", "info"), ("n", "int")]),
    ("Win_get_num_notify", W + [("target_rank", "int"), ("n", "intout")]),
    ("Put_notify_idx", RMA + [("notification_idx", "int")] + W),
    ("Get_notify_idx", GET + [("notification_idx", "int")] + W),
    ("Accumulate_notify_idx", RMA + [("op", "op"), ("notification_idx", "int")] + W),
    ("Get_accumulate_notify_idx", GACC + [("op", "op"), ("notification_idx", "int")] + W),
    ("Rput_notify_idx", RMA + [("notification_idx", "int")] + W + REQ),
    ("Rget_notify_idx", GET + [("notification_idx", "int")] + W + REQ),
    ("Raccumulate_notify_idx", RMA + [("op", "op"), ("notification_idx", "int")] + W + REQ),
    ("Rget_accumulate_notify_idx", GACC + [("op", "op"), ("notification_idx", "int")] + W + REQ),
    ("Win_get_notify_value", W + [("notification_idx", "int"), ("value", "countout")]),
    ("Win_reset_notify_value", W + [("notification_idx", "int"), ("old_value", "countout")]),
    ("Win_notify_ithreshold", W + [("notification_idx", "int"), ("expected", "count")] + REQ),
    ("Start", [("request", "reqinout")]),
    ("Startall", [("count", "int"), ("array_of_requests", "reqs")]),
    # Completion
    ("Test", [("request", "reqinout"), ("flag", "flag"), ("status", "status")]),
    ("Wait", [("request", "reqinout"), ("status", "status")]),
    ("Testany", [("count", "int"), ("array_of_requests", "reqs"), ("index", "index"),
                 ("flag", "flag"), ("status", "status")]),
    ("Waitany", [("count", "int"), ("array_of_requests", "reqs"), ("index", "index"),
                 ("status", "status")]),
    ("Request_free", [("request", "reqinout")]),
    ("Request_get_status", [("request", "req"), ("flag", "flag"), ("status", "status")]),
]

# Bound by hand below (Fortran form differs from C's), or not bound (with the reason).
HAND_NAMES = {
    "Error_string", "Strerror", "Get_mpi_error", "Get_version", "Win_get_transport",
    "Win_get_target_transport", "Win_get_name", "Win_create_keyval", "Win_set_attr",
    "Win_get_attr", "Testall", "Waitall", "Testsome", "Waitsome",
}

MPI_TYPES = {"dtype": ("MPI_Datatype", "Type"), "comm": ("MPI_Comm", "Comm"),
             "info": ("MPI_Info", "Info"), "op": ("MPI_Op", "Op"), "group": ("MPI_Group", "Group")}


def fwrap(head, items, tail, indent):
    """Fortran statement `head(item, item, ...)tail`, continued with & below 100 columns."""
    lines, cur = [], indent + head + "("
    for i, it in enumerate(items):
        piece = it + (", " if i < len(items) - 1 else "")
        if len(cur) + len(piece) > 96:
            lines.append(cur.rstrip() + " &")
            cur = indent + "     " + piece
        else:
            cur += piece
    if tail and len(cur) + 1 + len(tail) > 130:  # the tail (a bind(C) clause) on its own line
        lines.append(cur + ") &")
        cur = indent + "    " + tail.lstrip()
    else:
        cur += ")" + tail
    lines.append(cur)
    return "\n".join(lines)


def cwrap(head, items, tail, indent):
    lines, cur = [], indent + head + "("
    pad = " " * len(cur)
    for i, it in enumerate(items):
        piece = it + (", " if i < len(items) - 1 else "")
        if len(cur) + len(piece.rstrip()) > 100:
            lines.append(cur.rstrip())
            cur = pad + piece
        else:
            cur += piece
    lines.append(cur + ")" + tail)
    return "\n".join(lines)


def gen(spec):
    name, args = spec[0], spec[1]
    ccall = spec[2] if len(spec) > 2 else None
    lname = name.lower()
    fdecl, flocal, fpre, fact, fpost = [], [], [], [], []
    idecl, cparams, cpre, cargs, cpost = [], [], [], [], []
    for a, k in args:
        if k == "int":
            fdecl.append(f"integer, intent(in) :: {a}")
            fact.append(f"int({a}, c_int)")
            idecl.append(f"integer(c_int), value :: {a}")
            cparams.append(f"int {a}")
            cargs.append(a)
        elif k == "aint":
            fdecl.append(f"integer(kind=MPI_ADDRESS_KIND), intent(in) :: {a}")
            fact.append(a)
            idecl.append(f"integer(kind=MPI_ADDRESS_KIND), value :: {a}")
            cparams.append(f"MPI_Aint {a}")
            cargs.append(a)
        elif k == "aintout":
            fdecl.append(f"integer(kind=MPI_ADDRESS_KIND), intent(out) :: {a}")
            fact.append(a)
            idecl.append(f"integer(kind=MPI_ADDRESS_KIND), intent(out) :: {a}")
            cparams.append(f"MPI_Aint *{a}")
            cargs.append(a)
        elif k == "count":
            fdecl.append(f"integer(kind=MPI_COUNT_KIND), intent(in) :: {a}")
            fact.append(a)
            idecl.append(f"integer(kind=MPI_COUNT_KIND), value :: {a}")
            cparams.append(f"MPI_Count {a}")
            cargs.append(a)
        elif k == "countout":
            fdecl.append(f"integer(kind=MPI_COUNT_KIND), intent(out) :: {a}")
            fact.append(a)
            idecl.append(f"integer(kind=MPI_COUNT_KIND), intent(out) :: {a}")
            cparams.append(f"MPI_Count *{a}")
            cargs.append(a)
        elif k in ("bufin", "buf"):
            intent = "intent(in), " if k == "bufin" else ""
            fdecl.append(f"type(*), dimension(..), {intent}asynchronous :: {a}")
            fact.append(a)
            idecl.append(f"type(*), dimension(..), {intent}asynchronous :: {a}")
            cparams.append(f"CFI_cdesc_t *{a}")
            cpre.append(f"void *{a}_p = narmaf_addr({a});")
            cpre.append(f"if ({a}_p == NARMAF_NONCONTIG) return NARMA_ERR_ARG;")
            cargs.append(f"{a}_p")
        elif k in MPI_TYPES:
            t, f = MPI_TYPES[k]
            fdecl.append(f"type({t}), intent(in) :: {a}")
            fact.append(f"{a}%MPI_VAL")
            idecl.append(f"integer(c_int), value :: {a}")
            cparams.append(f"MPI_Fint {a}")
            cargs.append(f"MPI_{f}_f2c({a})")
        elif k == "infoout":
            fdecl.append(f"type(MPI_Info), intent(out) :: {a}")
            fact.append(f"{a}%MPI_VAL")
            idecl.append(f"integer(c_int), intent(out) :: {a}")
            cparams.append(f"MPI_Fint *{a}")
            cpre.append(f"MPI_Info {a}_c = MPI_INFO_NULL;")
            cargs.append(f"&{a}_c")
            cpost.append(f"if (rc == NARMA_SUCCESS) *{a} = MPI_Info_c2f({a}_c);")
        elif k == "eh":
            fdecl.append(f"type(NARMA_Errhandler), intent(in) :: {a}")
            fact.append(f"{a}%handle")
            idecl.append(f"integer(c_intptr_t), value :: {a}")
            cparams.append(f"intptr_t {a}")
            cargs.append(f"(NARMA_Errhandler){a}")
        elif k in ("ehout", "ehinout"):
            intent = "out" if k == "ehout" else "inout"
            fdecl.append(f"type(NARMA_Errhandler), intent({intent}) :: {a}")
            fact.append(f"{a}%handle")
            idecl.append(f"integer(c_intptr_t), intent({intent}) :: {a}")
            cparams.append(f"intptr_t *{a}")
            init = "NARMA_ERRHANDLER_NULL" if k == "ehout" else f"(NARMA_Errhandler)*{a}"
            cpre.append(f"NARMA_Errhandler {a}_c = {init};")
            cargs.append(f"&{a}_c")
            cpost.append(f"*{a} = (intptr_t){a}_c;")
        elif k == "ehfn":
            fdecl.append(f"procedure(NARMA_Win_errhandler_function) :: {a}")
            fact.append(f"c_funloc({a})")
            idecl.append(f"type(c_funptr), value :: {a}")
            cparams.append(f"void (*{a})(void)")
            cargs.append(f"(NARMA_Win_errhandler_function *){a}")
        elif k in ("groupout", "dtypeinout"):
            t, f = ("MPI_Group", "Group") if k == "groupout" else ("MPI_Datatype", "Type")
            intent = "out" if k == "groupout" else "inout"
            fdecl.append(f"type({t}), intent({intent}) :: {a}")
            fact.append(f"{a}%MPI_VAL")
            idecl.append(f"integer(c_int), intent({intent}) :: {a}")
            cparams.append(f"MPI_Fint *{a}")
            init = "MPI_GROUP_NULL" if k == "groupout" else f"MPI_Type_f2c(*{a})"
            cpre.append(f"{t} {a}_c = {init};")
            cargs.append(f"&{a}_c")
            cpost.append(f"*{a} = MPI_{f}_c2f({a}_c);")
        elif k in ("win", "req"):
            t = "NARMA_Win" if k == "win" else "NARMA_Request"
            fdecl.append(f"type({t}), intent(in) :: {a}")
            fact.append(f"{a}%handle")
            idecl.append(f"type(c_ptr), value :: {a}")
            cparams.append(f"{t} {a}")
            cargs.append(a)
        elif k in ("winout", "wininout", "reqout", "reqinout"):
            t = "NARMA_Win" if k.startswith("win") else "NARMA_Request"
            intent = "out" if k.endswith("out") and not k.endswith("inout") else "inout"
            fdecl.append(f"type({t}), intent({intent}) :: {a}")
            fact.append(f"{a}%handle")
            idecl.append(f"type(c_ptr), intent({intent}) :: {a}")
            cparams.append(f"{t} *{a}")
            cargs.append(a)
        elif k == "reqs":
            fdecl.append(f"type(NARMA_Request), intent(inout) :: {a}(*)")
            fact.append(a)
            idecl.append(f"type(NARMA_Request), intent(inout) :: {a}(*)")
            cparams.append(f"NARMA_Request *{a}")
            cargs.append(a)
        elif k == "cptrout":
            fdecl.append(f"type(c_ptr), intent(out) :: {a}")
            fact.append(a)
            idecl.append(f"type(c_ptr), intent(out) :: {a}")
            cparams.append(f"void **{a}")
            cargs.append(a)
        elif k in ("intout", "intinout", "flag", "index"):
            ftype = "logical" if k == "flag" else "integer"
            intent = "inout" if k == "intinout" else "out"
            fdecl.append(f"{ftype}, intent({intent}) :: {a}")
            flocal.append(f"integer(c_int) :: {a}_c")
            if k == "intinout":
                fpre.append(f"{a}_c = int({a}, c_int)")
            fact.append(f"{a}_c")
            if k == "flag":
                fpost.append(f"{a} = ({a}_c /= 0)")
            elif k == "index":
                fpost.append(f"{a} = {a}_c")
                fpost.append(f"if ({a}_c >= 0) {a} = {a}_c + 1")
            else:
                fpost.append(f"{a} = {a}_c")
            idecl.append(f"integer(c_int), intent({'inout' if k == 'intinout' else 'out'}) :: {a}")
            cparams.append(f"int *{a}")
            cargs.append(a)
        elif k == "status":
            fdecl.append(f"type(MPI_Status), intent(out), optional :: {a}")
            flocal.append(f"integer(c_int) :: {a}_c(MPI_STATUS_SIZE)")
            fact.append(f"{a}_c")
            fact.append(f"merge(1_c_int, 0_c_int, present({a}))")
            fpost.append(f"if (present({a})) call MPI_Status_f2f08({a}_c, {a})")
            idecl.append(f"integer(c_int), intent(out) :: {a}(*)")
            idecl.append(f"integer(c_int), value :: want_{a}")
            cparams.append(f"MPI_Fint *{a}")
            cparams.append(f"int want_{a}")
            cpre.append(f"MPI_Status {a}_c;")
            cpre.append(f"memset(&{a}_c, 0, sizeof {a}_c);")
            cargs.append(f"want_{a} ? &{a}_c : MPI_STATUS_IGNORE")
            cpost.append(f"if (want_{a}) MPI_Status_c2f(&{a}_c, {a});")
        elif k == "strin":
            fdecl.append(f"character(len=*), intent(in) :: {a}")
            fact.append(f"narmaf_cstr({a})")
            idecl.append(f"character(kind=c_char), intent(in) :: {a}(*)")
            cparams.append(f"const char *{a}")
            cargs.append(a)
        else:
            raise SystemExit(f"unknown kind {k} in {name}")
    fargs = [a for a, _ in args] + ["ierror"]
    iargs = []
    for a, k in args:
        iargs.append(a)
        if k == "status":
            iargs.append(f"want_{a}")
    # Fortran interface
    iface = fwrap(f"integer(c_int) function c_{lname}", iargs,
                  f" bind(C, name=\"narmaf_{lname}\")", "     ") + "\n"
    iface += "       import\n"
    iface += "".join(f"       {d}\n" for d in idecl)
    iface += f"     end function c_{lname}\n"
    # Fortran wrapper
    body = fwrap(f"subroutine NARMA_{name}", fargs, "", "  ") + "\n"
    body += "".join(f"    {d}\n" for d in fdecl)
    body += "    integer, optional, intent(out) :: ierror\n"
    body += "".join(f"    {d}\n" for d in flocal)
    body += "    integer(c_int) :: rc\n"
    body += "".join(f"    {s}\n" for s in fpre)
    body += fwrap(f"rc = c_{lname}", fact, "", "    ") + "\n"
    body += "".join(f"    {s}\n" for s in fpost)
    body += f"    call narmaf_return(rc, \"NARMA_{name}\", ierror)\n"
    body += f"  end subroutine NARMA_{name}\n"
    # C shim
    c = cwrap(f"NARMA_API int narmaf_{lname}", cparams or ["void"], "", "") + "\n{\n"
    c += "".join(f"    {s}\n" for s in cpre)
    call = ccall or cwrap(f"NARMA_{name}", cargs, "", "")
    if cpost:
        c += cwrap("int rc = " + f"NARMA_{name}", cargs, ";", "    ") + "\n" if not ccall \
            else f"    int rc = {ccall};\n"
        c += "".join(f"    {s}\n" for s in cpost)
        c += "    return rc;\n}\n"
    else:
        c += (cwrap(f"return NARMA_{name}", cargs, ";", "    ") if not ccall
              else f"    return {call};") + "\n}\n"
    return name, iface, body, c


def header_names():
    with open(os.path.join(ROOT, "include", "narma", "narma.h")) as f:
        text = f.read()
    return sorted(set(re.findall(r"NARMA_API\s+[\w\s\*]*?\bNARMA_(\w+)\s*\(", text)))


def render():
    with open(os.path.join(HERE, "narma_module.f90.in")) as f:
        ftmpl = f.read()
    with open(os.path.join(HERE, "narma_f.c.in")) as f:
        ctmpl = f.read()
    gens = [gen(s) for s in FUNCS]
    names = ", &\n       ".join(", ".join(f"NARMA_{g[0]}" for g in gens[i:i + 4])
                                for i in range(0, len(gens), 4))
    stamp = "GENERATED by bindings/fortran/gen_narma_f.py from its table and this template: do not edit"
    f90 = ftmpl.replace("@STAMP@", stamp).replace("@PUBLIC@", names)
    f90 = f90.replace("@INTERFACES@", "".join(g[1] for g in gens).rstrip("\n"))
    f90 = f90.replace("@PROCEDURES@", "\n".join(g[2] for g in gens).rstrip("\n"))
    c = ctmpl.replace("@STAMP@", stamp).replace("@SHIMS@", "\n".join(g[3] for g in gens).rstrip("\n"))
    return f90, c


def main():
    check = "--check" in sys.argv[1:]
    bound = {s[0] for s in FUNCS} | HAND_NAMES
    missing = [n for n in header_names() if n not in bound]
    f90, c = render()
    outs = {os.path.join(HERE, "narma.f90"): f90, os.path.join(HERE, "narma_f.c"): c}
    status = 0
    if missing:
        print("narma.h functions without a Fortran binding: " + ", ".join("NARMA_" + m for m in missing))
        status = 1
    for path, text in outs.items():
        old = open(path).read() if os.path.exists(path) else None
        if old != text:
            if check:
                print(f"{os.path.relpath(path, ROOT)} is stale: run bindings/fortran/gen_narma_f.py")
                status = 1
            else:
                with open(path, "w") as f:
                    f.write(text)
    if check and status == 0:
        print(f"Fortran module up to date: {len(bound)} narma.h functions bound")
    return status


if __name__ == "__main__":
    sys.exit(main())
