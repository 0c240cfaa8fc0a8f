import { applySpec } from './apply.js';
import { bumpSpec } from './bump.js';
import { checkSpec } from './check.js';
import { checkMetalSpec } from './check-metal.js';
import { cleanSpec } from './clean.js';
import { exportSpec } from './export.js';
import { formatSpec } from './format.js';
import { prSpec } from './pr.js';
import type { CommandSpec } from './spec.js';
import { resetSpec, statusSpec } from './status.js';
import { doctorSpec, testSpec } from './test.js';
import { verifySpec } from './verify.js';

/** Every command, in the order --help lists them. */
export const commands: CommandSpec[] = [
  applySpec,
  statusSpec,
  resetSpec,
  testSpec,
  doctorSpec,
  formatSpec,
  checkMetalSpec,
  verifySpec,
  prSpec,
  cleanSpec,
  checkSpec,
  exportSpec,
  bumpSpec,
];
