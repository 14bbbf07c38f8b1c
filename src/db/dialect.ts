/** The two databases the gateway runs on. */
export type Dialect = 'sqlite' | 'postgres';
