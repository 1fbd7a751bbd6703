// The claim form offers as owner only the members of the chosen team. Each owner
// option lists its person's teams (data-teams); the server checks the same rule.
document.addEventListener("DOMContentLoaded", () => {
  const form = document.getElementById("claim-form");
  if (!form) return;
  const team = form.querySelector("select[name=team]");
  const owner = form.querySelector("select[name=owner]");
  const everyone = Array.from(owner.options, (option) => option.cloneNode(true));

  const offerMembers = () => {
    const chosen = owner.value;
    const members = everyone.filter((option) => option.dataset.teams.split(" ").includes(team.value));
    owner.replaceChildren(...members.map((option) => option.cloneNode(true)));
    if (members.some((option) => option.value === chosen)) owner.value = chosen;
  };

  team.addEventListener("change", offerMembers);
  offerMembers();
});
