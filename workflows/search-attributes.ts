// Typed search attribute keys (Keyword) registered on the namespace: runs can be listed from
// Temporal visibility by definition and by organization.
import { defineSearchAttributeKey, SearchAttributeType } from '@temporalio/common';
import { SEARCH_ATTRIBUTE_ORG_ID, SEARCH_ATTRIBUTE_WORKFLOW_ID } from './types.ts';

export const WORKFLOW_ID_KEY = defineSearchAttributeKey(
  SEARCH_ATTRIBUTE_WORKFLOW_ID,
  SearchAttributeType.KEYWORD,
);
export const ORG_ID_KEY = defineSearchAttributeKey(SEARCH_ATTRIBUTE_ORG_ID, SearchAttributeType.KEYWORD);

/** The search attributes of a run of `workflowId` in `orgId`. */
export function runSearchAttributes(workflowId: string, orgId: string) {
  return [
    { key: WORKFLOW_ID_KEY, value: workflowId },
    { key: ORG_ID_KEY, value: orgId },
  ];
}
