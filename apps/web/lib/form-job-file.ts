import type { JobFileInput } from "@cyclemarket/client/job-file";

// The job file the simple form's "your own module" mode amounts to, so the user sees the JSON
// the CLI would read for the same job and can take it to the job-file tab or a script.

export interface UploadForm {
  name: string;
  /** The chosen module's file name: job files name the module by path. */
  moduleName: string;
  tasks: { args: string[] }[];
  benefit: JobFileInput["benefit"];
  replicas: number;
  workPerTask: number;
  memoryMb: number;
}

export function formJobFile(f: UploadForm): JobFileInput {
  return {
    name: f.name,
    module: f.moduleName,
    benefit: f.benefit,
    replicas: f.replicas,
    workPerTask: f.workPerTask,
    limits: { memoryMb: f.memoryMb },
    tasks: f.tasks.map((t) => ({ args: t.args })),
  };
}
