import { parentPort } from 'node:worker_threads';
import { runSweepJob, type SweepJob } from './job.js';

/** Receives { id, job } messages, answers { id, outcome }; one job at a time. */
const port = parentPort;
if (!port) throw new Error('sweep worker-loop runs only in a worker thread');
port.on('message', (msg: { id: number; job: SweepJob }) => {
  void runSweepJob(msg.job).then((outcome) => port.postMessage({ id: msg.id, outcome }));
});
