// Errors the CLI turns into one line and an exit code.
import { EXIT } from "../core/exit.ts";

export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode: number,
  ) {
    super(message);
  }
}

export const usageError = (message: string): CliError => new CliError(message, EXIT.usage);
export const environmentError = (message: string): CliError => new CliError(message, EXIT.environment);
