/** The two stores Vouch runs on; migrations and the few dialect-specific queries branch on it. */
export type Dialect = 'sqlite' | 'postgres';
