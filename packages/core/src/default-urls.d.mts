export declare const DEFAULT_REDIS_URL: string;
export declare const DEFAULT_DATABASE_URL: string;
