/**
 * SMSC simulator from the command line, to point a gateway at by hand:
 *   tsx tools/smsc-sim/main.ts --port 2775 --system-id test --password secret
 * It prints what it does. Lines typed on stdin change its behaviour:
 *   mo <from> <to> <text...>   inject an MO message
 *   throttle <n>               answer ESME_RTHROTTLED to the next n submits
 *   slow <ms>                  delay submit responses
 *   drop                       cut all connections
 *   early on|off               send receipts before submit_sm_resp
 *   stats                      print counters
 */
import { createInterface } from 'node:readline';
import { parseArgs } from 'node:util';
import { startSmscSimulator } from './server.ts';

const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '2775' },
    host: { type: 'string', default: '127.0.0.1' },
    'system-id': { type: 'string', default: 'test' },
    password: { type: 'string', default: 'secret' },
    'id-base': { type: 'string', default: 'hex' },
    'receipt-id-base': { type: 'string' },
    'receipt-delay': { type: 'string', default: '1000' },
  },
});

const base = (v: string | undefined): 'hex' | 'decimal' | undefined => (v === undefined ? undefined : v === 'decimal' ? 'decimal' : 'hex');
const stamp = (): string => new Date().toISOString().slice(11, 23);
const idBase = base(values['id-base']);
const receiptIdBase = base(values['receipt-id-base']);

const sim = await startSmscSimulator({
  port: Number(values.port),
  host: values.host,
  systemId: values['system-id'],
  password: values.password,
  receiptDelayMs: Number(values['receipt-delay']),
  ...(idBase ? { idBase } : {}),
  ...(receiptIdBase ? { receiptIdBase } : {}),
  log: (line) => console.log(`${stamp()} ${line}`),
});
console.log(
  `${stamp()} receivers ending 0001 UNDELIV, 0002 EXPIRED, 0003 refused, 0004 REJECTD, 0005 DELETED, 0006 UNKNOWN, 0007 ACCEPTD, 0008 ENROUTE, 0009 no receipt; others DELIVRD`,
);

const commands = createInterface({ input: process.stdin });
commands.on('line', (line) => {
  const [command, ...args] = line.trim().split(/\s+/);
  switch (command) {
    case 'mo':
      void sim.injectMo({ from: args[0] ?? '', to: args[1] ?? '', text: args.slice(2).join(' ') }).then(() => console.log(`${stamp()} MO acknowledged`));
      break;
    case 'throttle':
      sim.setMode({ throttleNext: Number(args[0] ?? 10) });
      break;
    case 'slow':
      sim.setMode({ responseDelayMs: Number(args[0] ?? 1000) });
      break;
    case 'drop':
      sim.dropConnections();
      break;
    case 'early':
      sim.setMode({ receiptBeforeResp: args[0] !== 'off' });
      break;
    case 'stats': {
      const { submits, refused, ...counters } = sim.stats;
      console.log(JSON.stringify({ ...counters, submits: submits.length, refused: refused.length, pending: sim.pendingDeliveries() }));
      break;
    }
    case '':
    case undefined:
      break;
    default:
      console.log('commands: mo <from> <to> <text> | throttle <n> | slow <ms> | drop | early on|off | stats');
  }
});

const shutdown = (): void => {
  commands.close();
  void sim.close().then(() => process.exit(0));
};
process.on('SIGINT', shutdown);
process.on('SIGTERM', shutdown);
