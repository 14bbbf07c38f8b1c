import Fastify from 'fastify';

/**
 * The baseline: a bare Fastify endpoint on the same Node, answering the
 * same envelope as POST /messages/sms/send, doing nothing else.
 */
const app = Fastify({ logger: false });
app.post('/messages/sms/send', async () => ({ hasError: false, message: 'Accepted 1 message(s), 1 credit(s).', totalRecords: 0, errors: [], object: null }));
const address = await app.listen({ host: '127.0.0.1', port: 0 });
process.stdout.write(`${JSON.stringify({ msg: 'gateway listening', address })}\n`);
