/* export_ir.h — `collgrad-check export-ir [--world N] [--output FILE]
 * [CASE|DIR]...`: each case's IR as JSON (ir_json.h), with its plan at world
 * N, in one document (ir_document.h), for the PyTorch runner and other tools. */
#ifndef CG_EXPORT_IR_H
#define CG_EXPORT_IR_H

/* argv[0] is "export-ir". Returns the exit status (exit_class.h): usage for
 * bad usage, a bad case file or a program the oracle refuses at that world;
 * infra when the output cannot be written. */
int cg_export_ir_main(int argc, char **argv);

#endif
