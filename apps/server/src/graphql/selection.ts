import { Kind, type FragmentDefinitionNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/** True when the field being resolved selects `name` directly (through fragments too). */
export function selectsField(info: GraphQLResolveInfo, name: string): boolean {
  return info.fieldNodes.some((node) => hasField(node.selectionSet, name, info.fragments, new Set()));
}

function hasField(
  set: SelectionSetNode | undefined,
  name: string,
  fragments: Record<string, FragmentDefinitionNode>,
  seen: Set<string>,
): boolean {
  for (const selection of set?.selections ?? []) {
    if (selection.kind === Kind.FIELD && selection.name.value === name) {
      return true;
    }
    if (selection.kind === Kind.INLINE_FRAGMENT && hasField(selection.selectionSet, name, fragments, seen)) {
      return true;
    }
    if (selection.kind === Kind.FRAGMENT_SPREAD && !seen.has(selection.name.value)) {
      seen.add(selection.name.value);
      const fragment = fragments[selection.name.value];
      if (fragment && hasField(fragment.selectionSet, name, fragments, seen)) {
        return true;
      }
    }
  }
  return false;
}
