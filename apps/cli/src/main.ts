/** The `hearth` executable: runs the command line and turns failures into messages and exit codes. */
import { createProgram } from './program.js';
import { reportError } from './output.js';

const program = createProgram();
try {
  await program.parseAsync(process.argv);
} catch (err) {
  const verbose = !!program.opts().verbose || !!process.env.HEARTH_DEBUG;
  process.exitCode = reportError(err, { verbose });
}
